import { openDocumentStream, resolveStreamItem } from '../document-stream.js';
// The stream yields StreamItems; `resolve` turns each into the event (or throws the error that ends it).
const resolve = (item) => resolveStreamItem(item);
export const subscriptionResolvers = {
    Subscription: {
        documentChanged: {
            subscribe: (_root, { organization }, context) => openDocumentStream(context, { organization }, 'Subscription.documentChanged'),
            resolve,
        },
        documentUpdated: {
            subscribe: (_root, { id }, context) => openDocumentStream(context, { documentId: id }, 'Subscription.documentUpdated'),
            resolve,
        },
    },
};
//# sourceMappingURL=subscriptions.js.map