import { and, desc, eq, inArray, isNull, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../client.js';
import { documents, organizations, type DocumentRow, type DocumentStatus, type NewDocumentRow, type OrganizationRow } from '../schema.js';

export interface DocumentWithOrganizationRow {
  document: DocumentRow;
  organization: OrganizationRow;
}

/** One document by id (the id must be a UUID: the caller checks it). */
export async function findDocumentById(db: Database, id: string): Promise<DocumentRow | null> {
  const [document] = await db.select().from(documents).where(eq(documents.id, id)).limit(1);
  return document ?? null;
}

/** One document by id with its organization, in one statement. */
export async function findDocumentWithOrganization(db: Database, id: string): Promise<DocumentWithOrganizationRow | null> {
  const [row] = await db
    .select({ document: documents, organization: organizations })
    .from(documents)
    .innerJoin(organizations, eq(organizations.id, documents.organizationId))
    .where(eq(documents.id, id))
    .limit(1);
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

function visibilityCondition(visibility: DocumentVisibility): SQL | undefined {
  if (visibility.everything) return undefined;
  const { anyStatusIn, publishedIn, now } = visibility;
  if (anyStatusIn.length === 0 && publishedIn.length === 0) return sql`false`;
  const published = and(
    inArray(documents.organizationId, [...publishedIn]),
    sql`${documents.status} = 'PUBLISHED'`,
    or(isNull(documents.embargoUntil), lte(documents.embargoUntil, now)),
  );
  if (publishedIn.length === 0) return inArray(documents.organizationId, [...anyStatusIn]);
  if (anyStatusIn.length === 0) return published;
  return or(inArray(documents.organizationId, [...anyStatusIn]), published);
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
}

/**
 * Visible documents, newest first (ties by id), filtered and paged in one statement, each with its organization
 * and its keyset `position` (its creation time as PostgreSQL prints it, exact to the microsecond).
 */
export async function listVisibleDocuments(
  db: Database,
  query: DocumentListQuery,
): Promise<(DocumentWithOrganizationRow & { position: string })[]> {
  const conditions: (SQL | undefined)[] = [visibilityCondition(query.visibility)];
  if (query.organizationSlug !== null) conditions.push(eq(organizations.slug, query.organizationSlug));
  if (query.statuses !== null) conditions.push(query.statuses.length === 0 ? sql`false` : inArray(documents.status, [...query.statuses]));
  if (query.after !== null)
    conditions.push(sql`(${documents.createdAt}, ${documents.id}) < (${query.after.createdAt}::timestamptz, ${query.after.id}::uuid)`);
  return db
    .select({ document: documents, organization: organizations, position: sql<string>`${documents.createdAt}::text` })
    .from(documents)
    .innerJoin(organizations, eq(organizations.id, documents.organizationId))
    .where(and(...conditions))
    .orderBy(desc(documents.createdAt), desc(documents.id))
    .limit(query.limit);
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
