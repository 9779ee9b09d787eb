import { listOwnConnectedApps, revokeOwnConnectedApp } from '../../domain/connected-apps.js';
import type { Resolvers } from '../../generated/resolvers.js';
import { domainRequest } from '../context.js';

// Third-party apps people allowed (docs/security.md, "Third-party apps and consent"): listed on the viewer, revoked here.

export const connectedAppResolvers = {
  Viewer: {
    connectedApps: async (_caller, _args, context) =>
      listOwnConnectedApps(await domainRequest(context, 'Viewer.connectedApps'), context.app.apps),
  },
  ConnectedApp: {
    scopes: (app) => [...app.scopes],
  },
  Mutation: {
    revokeConnectedApp: async (_source, { clientId }, context) =>
      revokeOwnConnectedApp(await domainRequest(context, 'Mutation.revokeConnectedApp'), context.app.apps, clientId),
  },
} satisfies Resolvers;
