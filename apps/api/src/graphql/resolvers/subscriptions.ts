import { openDocumentStream, resolveStreamItem, type StreamItem } from '../document-stream.js';
import type { Resolvers } from '../../generated/resolvers.js';

// The stream yields StreamItems; `resolve` turns each into the event (or throws the error that ends it).
const resolve = (item: unknown) => resolveStreamItem(item as StreamItem);

export const subscriptionResolvers = {
  Subscription: {
    documentChanged: {
      subscribe: (_root, { organization }, context) =>
        openDocumentStream(context, { organization }, 'Subscription.documentChanged') as never,
      resolve,
    },
    documentUpdated: {
      subscribe: (_root, { id }, context) => openDocumentStream(context, { documentId: id }, 'Subscription.documentUpdated') as never,
      resolve,
    },
  },
} satisfies Resolvers;
