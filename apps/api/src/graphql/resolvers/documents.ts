import { organizations, type Database } from '@latchkey/db';
import { authorize, can, isAuthorizationDenied } from '@latchkey/policy';
import { eq } from 'drizzle-orm';
import { findDocument } from '../../domain/documents.js';
import { DocumentPolicy } from '../../domain/policies.js';
import { isUuid } from '../../domain/subjects.js';
import type { Resolvers } from '../../generated/resolvers.js';
import type { GraphQLContext } from '../context.js';
import { badUserInput, notFound } from '../errors.js';

const subjectOf = (context: GraphQLContext) => context.app.subjects(context, context.caller?.subject ?? null);

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
      try {
        authorize(await subjectOf(context), DocumentPolicy.view, [found.document, new Date()], { handler: 'Query.document' });
      } catch (error) {
        // Another tenant's, unpublished or embargoed: indistinguishable from missing (spec Authorization 6).
        if (isAuthorizationDenied(error)) throw notFound();
        throw error;
      }
      return found.document;
    },
  },
  Document: {
    id: (doc) => doc.id,
    organization: (doc, _args, { app }) => organizationOf(app.db, doc.organizationId),
    title: (doc) => doc.title,
    body: (doc) => doc.body,
    status: (doc) => doc.status,
    legalHold: (doc) => doc.legalHold,
    embargoUntil: (doc) => doc.embargoUntil,
    internalNotes: async (doc, _args, context) => {
      authorize(await subjectOf(context), DocumentPolicy.viewInternalNotes, [doc], { handler: 'Document.internalNotes' });
      return doc.internalNotes;
    },
    createdAt: (doc) => doc.createdAt,
    updatedAt: (doc) => doc.updatedAt,
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
