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
    amr: (caller) => [...caller.amr],
    authTime: (caller) => (caller.authTime === null ? null : new Date(caller.authTime * 1000)),
    expiresAt: (caller) => new Date(caller.expiresAt * 1000),
    scope: (caller) => [...caller.scope],
    // The same account rule as `me`: a suspended account is refused whatever its token says.
    user: (caller, _args, context) => getOwnAccount(dbOf(context), caller.subject, () => subjectOf(context), 'Viewer.user'),
  },
} satisfies Resolvers;
