import { getTableColumns, sql, type Column, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { Database } from '../client.js';
import { reusableRead } from '../prepared.js';
import { compileRowMapper, type SelectedField } from '../row-mapper.js';
import { documents, memberships, organizations, users, type DocumentRow, type OrganizationRow, type UserRow } from '../schema/index.js';
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

export type ListedDocument = Omit<DocumentWithOrganizationRow, 'document'> & {
  document: DocumentRow;
  position: string;
  /** with `withOwners` only: the owner, or null when the owner's row is missing */
  owner?: ListedOwner | null;
};

/**
 * A field of the outer select with its columns named with their tables. In a select from one source, drizzle writes
 * the columns at a field's own top level by their bare names, which inside a subquery would name whichever table of
 * the scope has such a column; the columns of an SQL chunk nested in the field keep their tables.
 */
const qualified = (field: SQL): SQL<string> => sql<string>`${field}`;

// A statement's organizations and owners travel once each, beside its rows (`pageStatement`): a page of one
// organization's documents repeated that organization's columns in every row, and a person who owns several of them
// their account. Each is one JSON array of its columns (no key names), decoded by its own columns as a select's would be.
const organizationColumns = Object.values(getTableColumns(organizations));
const mapOrganizations = compileRowMapper(
  Object.entries(getTableColumns(organizations)).map(([key, column]) => ({ path: [key], field: column })),
) as (rows: unknown[][]) => OrganizationRow[];

/**
 * The names of the columns a list's select answers beside the document's own (`listedColumns`), by which the
 * statement around it (`pageStatement`) reads them: written once here.
 */
const LISTED = { position: 'position', ownerShown: 'owner_shown', list: 'list' } as const;

/** The statement's rows' organizations (the rows' `organizationId`), each once. */
const organizationsOfRows = (t: SQL) =>
  qualified(
    sql`(select coalesce(json_agg(json_build_array(${sql.join(organizationColumns, sql`, `)})), '[]')::text from ${organizations} where ${organizations.id} = any(array_agg(distinct ${t}.${sql.identifier(documents.organizationId.name)})))`,
  );

/**
 * The rows' owners (`LISTED.ownerShown`, null in a list that does not show them), each once, with the ids of their
 * organizations (what an owner's e-mail rule needs). Looked up for the rows the lists' limits kept, never before.
 */
const ownersOfRows = (t: SQL) =>
  qualified(
    sql`(select coalesce(json_agg(json_build_array(${userColumnsForJson}, (select coalesce(array_agg(${memberships.organizationId}::text), '{}') from ${memberships} where ${memberships.userId} = ${users.id}))), '[]')::text from ${users} where ${users.id} = any(array_agg(distinct ${t}.${sql.identifier(LISTED.ownerShown)})))`,
  );

function ownersById(json: unknown[][]): Map<string, ListedOwner> {
  const owners = new Map<string, ListedOwner>();
  for (const values of json) {
    const user = userFromJsonArray(values);
    owners.set(user.id, { user, organizationIds: values[USER_COLUMN_COUNT] as string[] });
  }
  return owners;
}

/**
 * A list statement, run with its placeholders' values: its rows, and with `withCaller` the account and roles of the
 * `callerId` placeholder's user (null: no such account), read by the same statement.
 */
export type ListStatement = (
  db: Database,
  values: Record<string, unknown>,
) => Promise<{ rows: ListedDocument[]; caller?: UserWithRoles | null }>;

/**
 * The values of a listed row, in the order of its JSON array (see `listSelect`): the document's columns (each with its
 * key and the column that decodes it), then its position, then with `list` its list's number in a statement of several.
 */
export const ROW_FIELDS: readonly SelectedField[] = Object.entries(getTableColumns(documents)).map(([key, column]) => ({
  path: [key],
  field: column,
}));

/**
 * What one list's select answers per row (`listSelect`): the document's columns under their own names, its position
 * (its creation time as PostgreSQL prints it), whose owner to show (`owner_shown`: the owner, or null in a list that
 * does not show owners) and, in a statement of several lists, its list's number. Plain columns: the JSON is built by
 * `pageStatement` over the rows the lists' limits kept. Built inside the list's select, it was computed for every
 * row a sort looked at (a list filtered by status sorts hundreds of rows for a page of ten); only an expensive
 * expression (a subquery, as the owner once was) is put off past the sort and the limit by PostgreSQL's planner.
 */
export function listedColumns(fields: readonly SelectedField[], options: { withOwners: boolean; list?: number }) {
  return {
    ...Object.fromEntries(fields.map(({ path, field }) => [path[0]!, field as Column])),
    position: sql<string>`${documents.createdAt}::text`.as(LISTED.position),
    ownerShown: (options.withOwners ? sql`${documents.ownerId}` : sql`null::uuid`).as(LISTED.ownerShown),
    ...(options.list === undefined ? {} : { list: sql<number>`${sql.raw(String(options.list))}`.as(LISTED.list) }),
  };
}

/**
 * The statement that answers a whole page (or several lists) as JSON text: PostgreSQL gathers the rows' arrays in
 * order (by list, then newest first: an aggregate keeps no order unless told), and beside them the rows'
 * organizations and, `withOwners`, their owners, each once; the driver hands over one string each, `JSON.parse` reads
 * it in one native pass, and the rows are mapped by a compiled mapper, as a select's rows are. Read value by value
 * instead (a string cut from the socket buffer per value, the owner's JSON parsed per row), a page of twenty rows cost
 * the server about 1.5 times as much CPU, six lists of a dashboard twice as much; building the JSON costs PostgreSQL
 * 5-10% more CPU, which the server's saving outweighs several times over.
 *
 * `build`'s rows are `listedColumns`' (`fields`, then with `byList` the list's number).
 */
export function pageStatement(
  name: string,
  fields: readonly SelectedField[],
  build: (db: Database) => SQLWrapper,
  options: { byList: boolean; withOwners: boolean; withCaller: boolean },
): ListStatement {
  const { byList, withOwners, withCaller } = options;
  const t = sql.identifier('t');
  const column = (name: string) => sql`${t}.${sql.identifier(name)}`;
  const newestFirst = sql`${column(documents.createdAt.name)} desc, ${column(documents.id.name)} desc`;
  const order = byList ? sql`${column(LISTED.list)}, ${newestFirst}` : newestFirst;
  const values = [
    ...fields.map(({ field }) => column((field as Column).name)),
    column(LISTED.position),
    ...(byList ? [column(LISTED.list)] : []),
  ];
  const row = sql`json_build_array(${sql.join(values, sql`, `)})`;
  // The caller's row is a subquery of its own beside the rows' aggregate: one statement, so one snapshot for both.
  const read = reusableRead<
    Record<string, unknown>,
    { page: string; organizations: string; owners: string | null; caller: string | null }[]
  >(name, (db) =>
    db
      .select({
        page: sql<string>`coalesce(json_agg(${row} order by ${order}), '[]')::text`,
        organizations: organizationsOfRows(sql`${t}`),
        owners: withOwners ? ownersOfRows(sql`${t}`) : sql<null>`null::text`,
        caller: withCaller ? qualified(userWithRolesAsJson(sql`${sql.placeholder('callerId')}::uuid`)) : sql<null>`null::text`,
      })
      .from(sql`(${build(db)}) as ${t}`),
  );
  const mapDocuments = compileRowMapper(fields) as (rows: unknown[][]) => DocumentRow[];
  const position = fields.length;
  return async (db, values) => {
    const [answer] = await read(db, values);
    const organizationsById = new Map<string, OrganizationRow>();
    for (const organization of mapOrganizations(JSON.parse(answer!.organizations) as unknown[][])) {
      organizationsById.set(organization.id, organization);
    }
    const owners = withOwners ? ownersById(JSON.parse(answer!.owners ?? '[]') as unknown[][]) : undefined;
    const json = JSON.parse(answer!.page) as unknown[][];
    const documentsOfRows = mapDocuments(json);
    const rows = new Array<ListedDocument>(json.length);
    for (let index = 0; index < json.length; index++) {
      const document = documentsOfRows[index]!;
      // The rows come from an inner join on organizations in the same snapshot: each one's organization is there.
      const organization = organizationsById.get(document.organizationId)!;
      const values = json[index]!;
      const row: ListedDocument = owners
        ? { document, organization, position: values[position] as string, owner: owners.get(document.ownerId) ?? null }
        : { document, organization, position: values[position] as string };
      if (byList) (row as ListedDocument & { list: number }).list = values[position + 1] as number;
      rows[index] = row;
    }
    return withCaller ? { rows, caller: decodeUserWithRoles(answer!.caller) } : { rows };
  };
}
