import { and, desc, eq, getTableColumns, inArray, isNull, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../client.js';
import { reusableRead } from '../prepared.js';
import { columnDecoder } from '../timestamps.js';
import {
  documents,
  memberships,
  organizations,
  users,
  type DocumentRow,
  type DocumentStatus,
  type NewDocumentRow,
  type OrganizationRow,
  type UserRow,
} from '../schema/index.js';

export interface DocumentWithOrganizationRow {
  document: DocumentRow;
  organization: OrganizationRow;
}

const documentWithOrganization = reusableRead<{ id: string }, DocumentWithOrganizationRow[]>('document_with_organization', (db) =>
  db
    .select({ document: documents, organization: organizations })
    .from(documents)
    .innerJoin(organizations, eq(organizations.id, documents.organizationId))
    .where(eq(documents.id, sql.placeholder('id')))
    .limit(1),
);

/** One document by id (the id must be a UUID: the caller checks it). */
export async function findDocumentById(db: Database, id: string): Promise<DocumentRow | null> {
  const [document] = await db.select().from(documents).where(eq(documents.id, id)).limit(1);
  return document ?? null;
}

/** One document by id with its organization, in one statement (read on the request paths: built once). */
export async function findDocumentWithOrganization(db: Database, id: string): Promise<DocumentWithOrganizationRow | null> {
  const [row] = await documentWithOrganization(db, { id });
  return row ?? null;
}

/** One document by its organization's slug and its title (unique within an organization), with the organization. */
export async function findDocumentByTitle(
  db: Database,
  key: { organizationSlug: string; title: string },
): Promise<DocumentWithOrganizationRow | null> {
  const [row] = await db
    .select({ document: documents, organization: organizations })
    .from(documents)
    .innerJoin(organizations, eq(organizations.id, documents.organizationId))
    .where(and(eq(organizations.slug, key.organizationSlug), eq(documents.title, key.title)))
    .limit(1);
  return row ?? null;
}

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

/** The visibility rule as SQL with placeholders; which branches exist depends only on which lists are empty. */
function visibilityCondition(visibility: DocumentVisibility): SQL | undefined {
  if (visibility.everything) return undefined;
  const { anyStatusIn, publishedIn } = visibility;
  if (anyStatusIn.length === 0 && publishedIn.length === 0) return sql`false`;
  const published = and(
    oneOf('publishedIn', publishedIn.length),
    sql`${documents.status} = 'PUBLISHED'`,
    or(isNull(documents.embargoUntil), lte(documents.embargoUntil, sql`${sql.placeholder('now')}::timestamptz`)),
  );
  if (publishedIn.length === 0) return oneOf('anyStatusIn', anyStatusIn.length);
  if (anyStatusIn.length === 0) return published;
  return or(oneOf('anyStatusIn', anyStatusIn.length), published);
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

/** A document's owner with the ids of the owner's organizations (what the owner's e-mail rule needs). */
export interface ListedOwner {
  user: UserRow;
  organizationIds: string[];
}

export type ListedDocument = DocumentWithOrganizationRow & {
  position: string;
  /** with `withOwners` only: the owner, or null when the owner's row is missing */
  owner?: ListedOwner | null;
};

const userColumns = Object.entries(getTableColumns(users));
const userColumnDecoders = userColumns.map(([key, column]) => [key, columnDecoder(column)] as const);

/**
 * The owner of a listed document as one JSON value, read by a subquery in the select list. PostgreSQL evaluates such
 * a subquery only for the rows the sort and the limit keep (it postpones it past them): a join on users instead
 * looked up the owner of every matching row before the sort, which on a list filtered by status is hundreds of rows
 * for a page of ten. Its keys are the user columns' own names, decoded by the columns themselves (timestamps).
 */
const ownerOfListedDocument = sql<ListedOwner | null>`(select json_build_object(${sql.join(
  userColumns.map(([key, column]) => sql`${sql.raw(`'${key}'`)}, ${column}`),
  sql`, `,
)}, 'organizationIds', (select coalesce(array_agg(${memberships.organizationId}::text), '{}') from ${memberships} where ${memberships.userId} = ${users.id})) from ${users} where ${users.id} = ${documents.ownerId})`.mapWith(
  (value: unknown): ListedOwner | null => {
    if (value === null) return null;
    const json = (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, unknown>;
    const user: Record<string, unknown> = {};
    for (const [key, decode] of userColumnDecoders) user[key] = json[key] === null ? null : decode(json[key]);
    return { user: user as UserRow, organizationIds: json['organizationIds'] as string[] };
  },
);

/**
 * The statement of one shape of list (which visibility branches, which filters, with owners or not): built once per
 * shape, run with the values as parameters, so a page costs no SQL building and PostgreSQL plans each shape once per
 * connection.
 */
const listStatements = new Map<string, (db: Database, values: Record<string, unknown>) => Promise<ListedDocument[]>>();

function listStatementFor(query: DocumentListQuery) {
  const { visibility, organizationSlug, statuses, after } = query;
  const withOwners = query.withOwners === true;
  // The lists' lengths are part of the shape (one placeholder per organization); a caller belongs to few.
  const branches = visibility.everything ? 'all' : `a${visibility.anyStatusIn.length}p${visibility.publishedIn.length}`;
  const statusFilter = statuses === null ? 'any' : statuses.length === 0 ? 'none' : 'some';
  const shape = `${branches}.${organizationSlug !== null}.${statusFilter}.${after !== null}${withOwners ? '.owners' : ''}`;
  let statement = listStatements.get(shape);
  if (!statement) {
    const conditions: (SQL | undefined)[] = [visibilityCondition(visibility)];
    if (organizationSlug !== null) conditions.push(eq(organizations.slug, sql.placeholder('slug')));
    if (statusFilter === 'none') conditions.push(sql`false`);
    if (statusFilter === 'some') conditions.push(sql`${documents.status}::text = any(${sql.placeholder('statuses')}::text[])`);
    if (after !== null)
      conditions.push(
        sql`(${documents.createdAt}, ${documents.id}) < (${sql.placeholder('afterCreatedAt')}::timestamptz, ${sql.placeholder('afterId')}::uuid)`,
      );
    statement = reusableRead(`documents_${shape}`, (db) =>
      db
        .select({
          document: documents,
          organization: organizations,
          position: sql<string>`${documents.createdAt}::text`,
          ...(withOwners ? { owner: ownerOfListedDocument } : {}),
        })
        .from(documents)
        .innerJoin(organizations, eq(organizations.id, documents.organizationId))
        .where(and(...conditions))
        .orderBy(desc(documents.createdAt), desc(documents.id))
        .limit(sql.placeholder('limit')),
    ) as (db: Database, values: Record<string, unknown>) => Promise<ListedDocument[]>;
    listStatements.set(shape, statement);
  }
  return statement;
}

/**
 * Visible documents, newest first (ties by id), filtered and paged in one statement, each with its organization
 * and its keyset `position` (its creation time as PostgreSQL prints it, exact to the microsecond).
 */
export async function listVisibleDocuments(db: Database, query: DocumentListQuery): Promise<ListedDocument[]> {
  const { visibility } = query;
  const values: Record<string, unknown> = {};
  if (!visibility.everything) {
    for (const [index, id] of visibility.anyStatusIn.entries()) values[`anyStatusIn${index}`] = id;
    for (const [index, id] of visibility.publishedIn.entries()) values[`publishedIn${index}`] = id;
  }
  return listStatementFor(query)(db, {
    ...values,
    now: (visibility.everything ? new Date() : visibility.now).toISOString(),
    slug: query.organizationSlug,
    statuses: query.statuses,
    afterCreatedAt: query.after?.createdAt,
    afterId: query.after?.id,
    limit: query.limit,
  });
}

/** One document by id with its organization, the document's row locked until the transaction `tx` ends. */
export async function lockDocumentWithOrganization(tx: Database, id: string): Promise<DocumentWithOrganizationRow | null> {
  const [row] = await tx
    .select({ document: documents, organization: organizations })
    .from(documents)
    .innerJoin(organizations, eq(organizations.id, documents.organizationId))
    .where(eq(documents.id, id))
    .for('update', { of: documents });
  return row ?? null;
}

/** Adds a document; a title already used in its organization fails with `documents_organization_title_key`. */
export async function insertDocument(db: Database, values: NewDocumentRow): Promise<DocumentRow> {
  const [created] = await db.insert(documents).values(values).returning();
  return created!;
}

/** Changes a document's columns and answers its new row (undefined when there is no such document). */
export async function updateDocumentById(db: Database, id: string, values: Partial<DocumentRow>): Promise<DocumentRow | undefined> {
  const [updated] = await db.update(documents).set(values).where(eq(documents.id, id)).returning();
  return updated;
}

export async function deleteDocumentById(db: Database, id: string): Promise<void> {
  await db.delete(documents).where(eq(documents.id, id));
}
