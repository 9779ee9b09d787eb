import { organizations, type Database } from '@latchkey/db';
import { authorize, can } from '@latchkey/policy';
import { eq } from 'drizzle-orm';
import { findDocument } from '../../domain/documents.js';
import { DocumentPolicy } from '../../domain/policies.js';
import { isUuid } from '../../domain/subjects.js';
import type { Resolvers } from '../../generated/resolvers.js';
import { authorizeOrHide, subjectOf } from '../access.js';
import { badUserInput, notFound } from '../errors.js';


async function organizationOf(db: Database, id: string) {
  const [org] = await db.select().from(organizations).where(eq(organizations.id, id)).limit(1);
  if (!org) throw new Error(`document organization ${id} missing`);
  return org;
}

export const documentResolvers: Resolvers = {
  Query: {
    document: async (_source, { id }, context) => {
      if (!isUuid(id)) throw badUserInput('id must be a document id (a UUID).');
      const found = await findDocument(context.app.db, id);
      if (!found) throw notFound();
      // Another tenant's, unpublished or embargoed: indistinguishable from missing.
      authorizeOrHide(await subjectOf(context), DocumentPolicy.view, [found.document, new Date()], { handler: 'Query.document' });
      return found.document;
    },
  },
  Document: {
    // Plain fields resolve by property name.
    organization: (doc, _args, { app }) => organizationOf(app.db, doc.organizationId),
    internalNotes: async (doc, _args, context) => {
      authorize(await subjectOf(context), DocumentPolicy.viewInternalNotes, [doc], { handler: 'Document.internalNotes' });
      return doc.internalNotes;
    },
    viewerCan: async (doc, _args, context) => ({
      subject: await subjectOf(context),
      document: doc,
      organization: await organizationOf(context.app.db, doc.organizationId),
    }),
  },
  // The yes/no check of the very abilities the mutations authorize with (spec Authorization 10).
  DocumentAbilities: {
    update: ({ subject, document }) => can(subject, DocumentPolicy.update, document),
    publish: ({ subject, document, organization }) => can(subject, DocumentPolicy.publish, document, organization),
    archive: ({ subject, document }) => can(subject, DocumentPolicy.archive, document),
    delete: ({ subject, document }) => can(subject, DocumentPolicy.delete, document),
    setLegalHold: ({ subject, document }) => can(subject, DocumentPolicy.setLegalHold, document),
  },
};
