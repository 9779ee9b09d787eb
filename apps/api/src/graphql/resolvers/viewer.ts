import { getOwnAccount } from '../../domain/accounts.js';
import type { Resolvers } from '../../generated/resolvers.js';
import { dbOf, subjectOf } from '../context.js';

/** Fields these resolvers answer from the verified token alone, without the database (`user` reads it). */
export const viewerDatabaseFree = [
  'Query.viewer',
  'Viewer.subject',
  'Viewer.amr',
  'Viewer.acr',
  'Viewer.authTime',
  'Viewer.expiresAt',
  'Viewer.scope',
];

export const viewerResolvers = {
  Query: {
    // Route-level access already refused guests; a null here is unreachable but keeps the type honest.
    viewer: (_source, _args, { caller }) => caller,
  },
  Viewer: {
    amr: (principal) => [...principal.amr],
    authTime: (principal) => (principal.authTime === null ? null : new Date(principal.authTime * 1000)),
    expiresAt: (principal) => new Date(principal.expiresAt * 1000),
    scope: (principal) => [...principal.scope],
    // The same account rule as `me`: a suspended account is refused whatever its token says.
    user: (principal, _args, context) => getOwnAccount(dbOf(context), principal.subject, () => subjectOf(context), 'Viewer.user'),
  },
} satisfies Resolvers;
