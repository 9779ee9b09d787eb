import { getTableColumns, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { Database } from '../client.js';
import { reusableRead } from '../prepared.js';
import { compileRowMapper, type SelectedField } from '../row-mapper.js';
import { documents, memberships, organizations, users, type DocumentRow, type UserRow } from '../schema/index.js';
import type { DocumentWithOrganizationRow } from './documents.js';
import {
  decodeUserWithRoles,
  USER_COLUMN_COUNT,
  userFromJsonArray,
  userColumnsForJson,
  userWithRolesAsJson,
  type UserWithRoles,
} from './users.js';

// What a listed document is made of, and how a list's rows travel: as one JSON text per statement (`pageStatement`).

/** A document's owner with the ids of the owner's organizations (what the owner's e-mail rule needs). */
export interface ListedOwner {
  user: UserRow;
  organizationIds: string[];
}

/**
 * A listed document: without `body` when its list was read with `withBody: false`. Absent, not empty: a reader that
 * should have asked for it gets nothing rather than a wrong text (over GraphQL, `Document.body` answers an error).
 */
export type ListedDocumentRow = Omit<DocumentRow, 'body'> & { body?: string };

export type ListedDocument = Omit<DocumentWithOrganizationRow, 'document'> & {
  document: ListedDocumentRow;
  position: string;
  /** with `withOwners` only: the owner, or null when the owner's row is missing */
  owner?: ListedOwner | null;
};

const { body: _body, ...documentColumnsWithoutBody } = getTableColumns(documents);

/**
 * The owner of a listed document as one JSON array (the user's columns in `userColumnsForJson` order, then the ids of
 * the user's organizations), read by a subquery in the select list. PostgreSQL evaluates such a subquery only for the
 * rows the sort and the limit keep (it postpones it past them): a join on users instead looked up the owner of every
 * matching row before the sort, which on a list filtered by status is hundreds of rows for a page of ten. An array
 * rather than an object: the page's JSON carries no key names, and each value is decoded by its own column.
 */
const decodeListedOwner = (value: unknown): ListedOwner | null => {
  if (value === null) return null;
  const json = (typeof value === 'string' ? JSON.parse(value) : value) as unknown[];
  return { user: userFromJsonArray(json), organizationIds: json[USER_COLUMN_COUNT] as string[] };
};

export const ownerOfListedDocument =
  sql<ListedOwner | null>`(select json_build_array(${userColumnsForJson}, (select coalesce(array_agg(${memberships.organizationId}::text), '{}') from ${memberships} where ${memberships.userId} = ${users.id})) from ${users} where ${users.id} = ${documents.ownerId})`.mapWith(
    decodeListedOwner,
  );
/** In a statement of several lists where only some show owners, the others' owner column (the same type: json). */
export const noOwner = sql<ListedOwner | null>`null::json`.mapWith(decodeListedOwner);

/**
 * A list statement, run with its placeholders' values: its rows, and with `withCaller` the account and roles of the
 * `callerId` placeholder's user (null: no such account), read by the same statement.
 */
export type ListStatement = (
  db: Database,
  values: Record<string, unknown>,
) => Promise<{ rows: ListedDocument[]; caller?: UserWithRoles | null }>;

/**
 * The values of a listed row, in the order of its JSON array (see `listSelect`): each with the path it takes in the
 * row object and the column or expression that reads and decodes it. `list` numbers the list in a statement of several.
 */
export function rowFields(columns: { owner: SQL | null; withBody: boolean; list?: number }): SelectedField[] {
  const fields: SelectedField[] = [];
  const document = columns.withBody ? getTableColumns(documents) : documentColumnsWithoutBody;
  for (const [key, column] of Object.entries(document)) fields.push({ path: ['document', key], field: column });
  for (const [key, column] of Object.entries(getTableColumns(organizations))) fields.push({ path: ['organization', key], field: column });
  fields.push({ path: ['position'], field: sql<string>`${documents.createdAt}::text` });
  if (columns.owner) fields.push({ path: ['owner'], field: columns.owner });
  if (columns.list !== undefined) fields.push({ path: ['list'], field: sql<number>`${sql.raw(String(columns.list))}`.mapWith(Number) });
  return fields;
}

/**
 * The statement that answers a whole page (or several lists) as one JSON text: PostgreSQL gathers the rows' arrays in
 * order (by list, then newest first: an aggregate keeps no order unless told), the driver hands over one string,
 * `JSON.parse` reads it in one native pass, and the rows are mapped by the same compiled mapper a select's rows take.
 * Read value by value instead (a string cut from the socket buffer per value, the owner's JSON parsed per row), a page
 * of twenty rows cost the server about 1.5 times as much CPU, six lists of a dashboard twice as much; building the
 * JSON costs PostgreSQL 5-10% more CPU, which the server's saving outweighs several times over.
 */
export function pageStatement(
  name: string,
  fields: readonly SelectedField[],
  build: (db: Database) => SQLWrapper,
  byList: boolean,
  withCaller = false,
): ListStatement {
  const t = sql.identifier('t');
  const newestFirst = sql`${t}.${sql.identifier('sort_created_at')} desc, ${t}.${sql.identifier('sort_id')} desc`;
  const order = byList ? sql`${t}.${sql.identifier('list')}, ${newestFirst}` : newestFirst;
  const page = sql<string>`coalesce(json_agg(${t}.${sql.identifier('row')} order by ${order}), '[]')::text`;
  // The caller's row is a subquery of its own beside the rows' aggregate: one statement, so one snapshot for both.
  const caller = userWithRolesAsJson(sql`${sql.placeholder('callerId')}::uuid`);
  const read = reusableRead<Record<string, unknown>, { page: string; caller?: string | null }[]>(name, (db) =>
    withCaller ? db.select({ page, caller }).from(sql`(${build(db)}) as ${t}`) : db.select({ page }).from(sql`(${build(db)}) as ${t}`),
  );
  const mapRows = compileRowMapper(fields);
  return async (db, values) => {
    const [answer] = await read(db, values);
    const rows = mapRows(JSON.parse(answer!.page) as unknown[][]) as ListedDocument[];
    return withCaller ? { rows, caller: decodeUserWithRoles(answer!.caller ?? null) } : { rows };
  };
}
