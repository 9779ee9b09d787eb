import { documents, organizations, type Database, type DocumentRow, type OrganizationRow } from '@latchkey/db';
import { eq } from 'drizzle-orm';
import type { Subject } from './subject.js';

/** What `viewerCan` is computed from: the caller, the document and its organization. */
export interface DocumentAbilitySource {
  subject: Subject | null;
  document: DocumentRow;
  organization: OrganizationRow;
}

export async function findDocument(db: Database, id: string): Promise<{ document: DocumentRow; organization: OrganizationRow } | null> {
  const [row] = await db
    .select({ document: documents, organization: organizations })
    .from(documents)
    .innerJoin(organizations, eq(organizations.id, documents.organizationId))
    .where(eq(documents.id, id))
    .limit(1);
  return row ?? null;
}
