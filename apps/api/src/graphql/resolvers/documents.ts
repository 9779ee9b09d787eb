import { handleMaybePromise, type MaybePromise } from '@whatwg-node/promise-helpers';
import type { OrganizationRow, UserRow } from '@latchkey/db';
import {
  archiveDocument,
  createDocument,
  deleteDocument,
  publishDocument,
  setLegalHold,
  updateDocument,
} from '../../domain/document-mutations.js';
import { getDocument, getDocumentByTitle, listDocuments, ViewerDocumentAbilities, type DocumentListInput } from '../../domain/documents.js';
import type { Resolvers } from '../../generated/resolvers.js';
import { domainRequest, domainRequestForPage, loadersOf, subjectAtHand } from '../context.js';
import { selectsPath } from '../selection.js';

/** Where a page of documents selects its owners: such a page reads them in its own statement. */
const OWNERS_OF_A_PAGE = ['edges', 'node', 'owner'];

export const documentResolvers = {
  Query: {
    document: async (_source, { id }, context) => (await getDocument(await domainRequest(context, 'Query.document'), id)).document,
    // A @oneOf input: validation has made sure exactly one key is given.
    documentBy: async (_source, { lookup }, context) => {
      const request = await domainRequest(context, 'Query.documentBy');
      const found =
        lookup.id != null ? await getDocument(request, lookup.id, ['lookup', 'id']) : await getDocumentByTitle(request, lookup.title!);
      return found.document;
    },
    documents: async (_source, { filter, first, after }, context, info) => {
      const page: DocumentListInput = {
        organization: filter?.organization,
        status: filter?.status,
        first,
        after,
        withOwners: selectsPath(info, OWNERS_OF_A_PAGE),
      };
      return listDocuments(await domainRequestForPage(context, 'Query.documents', page), page);
    },
  },
  Document: {
    // Plain fields resolve by property name; internalNotes is guarded by its @can mark, once per row. A document's
    // organization and owner exist (foreign keys); on a page both are usually at hand, and then so is the answer.
    organization: (doc, _args, context) => loadersOf(context).organization.load(doc.organizationId) as MaybePromise<OrganizationRow>,
    owner: (doc, _args, context) => loadersOf(context).user.load(doc.ownerId) as MaybePromise<UserRow>,
    viewerCan: (doc, _args, context) => {
      const organization = loadersOf(context).organization.load(doc.organizationId);
      return handleMaybePromise(
        () => subjectAtHand(context),
        (subject) =>
          handleMaybePromise(
            () => organization,
            (found) => new ViewerDocumentAbilities(subject, doc, found!),
          ),
      );
    },
  },
  Mutation: {
    createDocument: async (_source, { input }, context) => createDocument(await domainRequest(context, 'Mutation.createDocument'), input),
    updateDocument: async (_source, { input }, context) => updateDocument(await domainRequest(context, 'Mutation.updateDocument'), input),
    publishDocument: async (_source, { id }, context) => publishDocument(await domainRequest(context, 'Mutation.publishDocument'), id),
    archiveDocument: async (_source, { id }, context) => archiveDocument(await domainRequest(context, 'Mutation.archiveDocument'), id),
    deleteDocument: async (_source, { id }, context) => deleteDocument(await domainRequest(context, 'Mutation.deleteDocument'), id),
    setLegalHold: async (_source, { id, legalHold }, context) =>
      setLegalHold(await domainRequest(context, 'Mutation.setLegalHold'), id, legalHold),
  },
} satisfies Resolvers;
