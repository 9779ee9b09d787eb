import { and, desc, eq, inArray, isNull, lte, or, sql, type SQL } from 'drizzle-orm';
import { unionAll } from 'drizzle-orm/pg-core';
import type { Database } from '../client.js';
import type { SelectedField } from '../row-mapper.js';
import { documents, organizations, type DocumentStatus } from '../schema/index.js';
import { listedColumns, pageStatement, ROW_FIELDS, type ListedDocument, type ListStatement } from './document-list-rows.js';
import { findUserWithRoles, type UserWithRoles } from './users.js';

export type { ListedDocument } from './document-list-rows.js';

// Lists of visible documents: one list per statement, or several lists of one request in one statement.

/**
 * Which documents a list may return, as decided by the caller's policy: every document, or those of
 * `anyStatusIn` organizations whatever their status, and those of `publishedIn` organizations that are
 * PUBLISHED and out of embargo at `now`. This module only turns the decision into SQL.
 */
export type DocumentVisibility =
  | { everything: true }
  | { everything: false; anyStatusIn: readonly string[]; publishedIn: readonly string[]; now: Date };

/**
 * `organization_id in ($1, ..., $n)`, one placeholder per organization: a list of one stays `= $1` for the planner,
 * so even a generic plan walks the (organization, created) index backwards and stops after a page. One array
 * parameter (`= any($1)`) cannot be ordered that way, and PostgreSQL then sorted every matching row.
 */
const oneOf = (name: string, count: number) =>
  inArray(
    documents.organizationId,
    Array.from({ length: count }, (_, index) => sql.placeholder(`${name}${index}`)),
  );

/**
 * The visibility rule as SQL with placeholders (each name after `p`, the list's prefix in a statement of several);
 * which branches exist depends only on which lists are empty.
 */
function visibilityCondition(visibility: DocumentVisibility, p: string): SQL | undefined {
  if (visibility.everything) return undefined;
  const { anyStatusIn, publishedIn } = visibility;
  if (anyStatusIn.length === 0 && publishedIn.length === 0) return sql`false`;
  const published = and(
    oneOf(`${p}publishedIn`, publishedIn.length),
    sql`${documents.status} = 'PUBLISHED'`,
    or(isNull(documents.embargoUntil), lte(documents.embargoUntil, sql`${sql.placeholder(`${p}now`)}::timestamptz`)),
  );
  if (publishedIn.length === 0) return oneOf(`${p}anyStatusIn`, anyStatusIn.length);
  if (anyStatusIn.length === 0) return published;
  return or(oneOf(`${p}anyStatusIn`, anyStatusIn.length), published);
}

export interface DocumentListQuery {
  visibility: DocumentVisibility;
  /** only this organization's documents */
  organizationSlug: string | null;
  /** only documents in one of these statuses (an empty list matches none) */
  statuses: readonly DocumentStatus[] | null;
  /** keyset position: only documents after this one, newest first (`createdAt` as `position` gave it) */
  after: { createdAt: string; id: string } | null;
  limit: number;
  /**
   * Also read each document's owner with the ids of the owner's organizations (what the owner's e-mail rule needs),
   * in the same statement, for a page that shows owners: one statement fewer than loading them afterwards.
   * @default false
   */
  withOwners?: boolean;
}

/**
 * Row limits (a page size and the one row more that tells whether a next page exists) written into a single list's
 * statement as a constant. With `limit $n`, PostgreSQL's generic plan assumes a tenth of the matching rows: it looked
 * several times dearer than a plan made for the actual value, so every execution of the prepared statement was planned
 * again (a custom plan, 0.1-0.25 ms of the database's CPU, a quarter of the page's statement). With the limit in the
 * text, both plans are estimated alike and PostgreSQL keeps the generic one after its first five runs, as it is meant
 * to. Only common page sizes are written in: each one is a statement of its own on every pooled connection, so other
 * sizes (`first` may be anything from 0 to 100) share the placeholder and are planned per execution as before.
 */
const CONSTANT_LIMITS: ReadonlySet<number> = new Set([1, 5, 10, 20, 25, 50, 100].map((size) => size + 1));

const constantLimitOf = (query: DocumentListQuery): number | undefined => (CONSTANT_LIMITS.has(query.limit) ? query.limit : undefined);

/** Which statement a list needs: its visibility branches, its filters, with owners or not (its values aside). */
function shapeOf(query: DocumentListQuery): string {
  const { visibility, organizationSlug, statuses, after } = query;
  // The lists' lengths are part of the shape (one placeholder per organization); a caller belongs to few.
  const branches = visibility.everything ? 'all' : `a${visibility.anyStatusIn.length}p${visibility.publishedIn.length}`;
  const statusFilter = statuses === null ? 'any' : statuses.length === 0 ? 'none' : 'some';
  return `${branches}.${organizationSlug !== null}.${statusFilter}.${after !== null}${query.withOwners === true ? '.owners' : ''}`;
}

/**
 * The select of one list, its placeholders named after `p`: one row per document (`listedColumns`: its columns, its
 * position, whose owner to show and with `list` its list's number), newest first, limited.
 */
function listSelect(
  db: Database,
  query: DocumentListQuery,
  p: string,
  fields: readonly SelectedField[],
  list?: number,
  constantLimit?: number,
) {
  const { visibility, organizationSlug, statuses, after } = query;
  const conditions: (SQL | undefined)[] = [visibilityCondition(visibility, p)];
  if (organizationSlug !== null) conditions.push(eq(organizations.slug, sql.placeholder(`${p}slug`)));
  if (statuses !== null && statuses.length === 0) conditions.push(sql`false`);
  if (statuses !== null && statuses.length > 0)
    conditions.push(sql`${documents.status}::text = any(${sql.placeholder(`${p}statuses`)}::text[])`);
  if (after !== null)
    conditions.push(
      sql`(${documents.createdAt}, ${documents.id}) < (${sql.placeholder(`${p}afterCreatedAt`)}::timestamptz, ${sql.placeholder(`${p}afterId`)}::uuid)`,
    );
  return (
    db
      .select(listedColumns(fields, { withOwners: query.withOwners === true, list }))
      .from(documents)
      .innerJoin(organizations, eq(organizations.id, documents.organizationId))
      .where(and(...conditions))
      .orderBy(desc(documents.createdAt), desc(documents.id))
      // drizzle writes an SQL chunk as it is (its type names only numbers and placeholders); a number would be a parameter.
      .limit(constantLimit === undefined ? sql.placeholder(`${p}limit`) : (sql.raw(String(constantLimit)) as unknown as number))
  );
}

/** The values of one list's placeholders, named after `p`. */
function listValues(query: DocumentListQuery, p: string, values: Record<string, unknown>): void {
  const { visibility } = query;
  if (!visibility.everything) {
    for (const [index, id] of visibility.anyStatusIn.entries()) values[`${p}anyStatusIn${index}`] = id;
    for (const [index, id] of visibility.publishedIn.entries()) values[`${p}publishedIn${index}`] = id;
  }
  values[`${p}now`] = (visibility.everything ? new Date() : visibility.now).toISOString();
  values[`${p}slug`] = query.organizationSlug;
  values[`${p}statuses`] = query.statuses;
  values[`${p}afterCreatedAt`] = query.after?.createdAt;
  values[`${p}afterId`] = query.after?.id;
  values[`${p}limit`] = query.limit;
}

/**
 * The statement of one shape of list: built once per shape, run with the values as parameters, so a page costs no
 * SQL building and PostgreSQL plans each shape once per connection.
 */
const listStatements = new Map<string, ListStatement>();

function listStatementFor(query: DocumentListQuery, withCaller: boolean): ListStatement {
  const constantLimit = constantLimitOf(query);
  const shape = `${shapeOf(query)}${constantLimit === undefined ? '' : `.limit${constantLimit}`}${withCaller ? '.caller' : ''}`;
  let statement = listStatements.get(shape);
  if (!statement) {
    const fields = ROW_FIELDS;
    statement = pageStatement(`documents_${shape}`, fields, (db) => listSelect(db, query, '', fields, undefined, constantLimit), {
      byList: false,
      withOwners: query.withOwners === true,
      withCaller,
    });
    listStatements.set(shape, statement);
  }
  return statement;
}

/**
 * Visible documents, newest first (ties by id), filtered and paged in one statement, each with its organization
 * and its keyset `position` (its creation time as PostgreSQL prints it, exact to the microsecond).
 */
export async function listVisibleDocuments(db: Database, query: DocumentListQuery): Promise<ListedDocument[]> {
  const values: Record<string, unknown> = {};
  listValues(query, '', values);
  return (await listStatementFor(query, false)(db, values)).rows;
}

/**
 * Statements of several lists, one per combination of shapes. A request picks its lists' filters, so the
 * combinations are bounded here: past this many, lists are read one statement each (still correct, only slower).
 */
const MAX_COMBINED_STATEMENTS = 256;
const combinedStatements = new Map<string, ListStatement>();

type CombinedRow = ListedDocument & { list: number };

function combinedStatementFor(queries: readonly DocumentListQuery[], withCaller: boolean): ListStatement | undefined {
  const withOwners = queries.some((query) => query.withOwners === true);
  const key = `${queries.map(shapeOf).join('|')}${withCaller ? '|caller' : ''}`;
  let statement = combinedStatements.get(key);
  if (!statement && combinedStatements.size < MAX_COMBINED_STATEMENTS) {
    // Every list's row has the same values in the same order (only the list's number differs): one mapper reads them all.
    const fields = ROW_FIELDS;
    statement = pageStatement(
      `documents_combined_${combinedStatements.size}`,
      fields,
      (db) => {
        const [first, second, ...rest] = queries.map((query, list) => listSelect(db, query, `l${list}_`, fields, list));
        // Sorting costs PostgreSQL a sort of the pages' own rows (a few dozen), each list already limited.
        return unionAll(first!, second!, ...rest);
      },
      { byList: true, withOwners, withCaller },
    );
    combinedStatements.set(key, statement);
  }
  return statement;
}

/** The lists, and the caller's account and roles when asked (`callerId`), in as few statements as the lists allow. */
async function readLists(
  db: Database,
  queries: readonly DocumentListQuery[],
  callerId: string | null,
): Promise<{ lists: ListedDocument[][]; caller?: UserWithRoles | null }> {
  const withCaller = callerId !== null;
  const values: Record<string, unknown> = withCaller ? { callerId } : {};
  if (queries.length === 1) {
    const [query] = queries as [DocumentListQuery];
    listValues(query, '', values);
    const { rows, caller } = await listStatementFor(query, withCaller)(db, values);
    return { lists: [rows], ...(withCaller ? { caller } : {}) };
  }
  const statement = combinedStatementFor(queries, withCaller);
  if (!statement) {
    const [caller, ...lists] = await Promise.all([
      withCaller ? findUserWithRoles(db, callerId) : undefined,
      ...queries.map((query) => listVisibleDocuments(db, query)),
    ]);
    return { lists: lists as ListedDocument[][], ...(withCaller ? { caller: caller as UserWithRoles | null } : {}) };
  }
  for (const [list, query] of queries.entries()) listValues(query, `l${list}_`, values);
  const lists: CombinedRow[][] = queries.map(() => []);
  const { rows, caller } = await statement(db, values);
  for (const row of rows as CombinedRow[]) lists[row.list]!.push(row);
  return {
    lists: lists.map((rows, list) =>
      queries[list]!.withOwners === true
        ? rows.map(({ document, organization, position, owner }) => ({ document, organization, position, owner }))
        : rows.map(({ document, organization, position }) => ({ document, organization, position })),
    ),
    ...(withCaller ? { caller } : {}),
  };
}

/**
 * Several lists of one request in one statement (a union of each list's own select, with its own placeholders):
 * each list is exactly what `listVisibleDocuments` answers for it, visibility and filters included. A dashboard of
 * six lists then costs one round trip instead of six.
 */
export async function listVisibleDocumentsTogether(db: Database, queries: readonly DocumentListQuery[]): Promise<ListedDocument[][]> {
  return (await readLists(db, queries, null)).lists;
}

/**
 * The lists as `listVisibleDocumentsTogether` reads them, and in the same statement the account and roles of user
 * `callerId` exactly as `findUserWithRoles` answers them (null: no such account). For a request that has not read
 * its caller yet: one round trip instead of two. The lists' visibility is whatever the query says; deciding whether
 * it is the caller's is the caller's business.
 */
export async function listVisibleDocumentsWithCaller(
  db: Database,
  queries: readonly DocumentListQuery[],
  callerId: string,
): Promise<{ lists: ListedDocument[][]; caller: UserWithRoles | null }> {
  const { lists, caller } = await readLists(db, queries, callerId);
  return { lists, caller: caller ?? null };
}
