import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { reusableRead } from '../prepared.js';
import { documents, organizations, type DocumentRow, type NewDocumentRow, type OrganizationRow } from '../schema/index.js';

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
