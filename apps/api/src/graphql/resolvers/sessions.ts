import { endOtherOwnSessions, endOwnSession, endUserSessions, listOwnSessions } from '../../domain/sessions.js';
import type { Resolvers } from '../../generated/resolvers.js';
import { domainRequest } from '../context.js';

// Sessions people can see and end (docs/sessions.md). The caller's token's `sid` says which session is theirs.

export const sessionResolvers = {
  Query: {
    mySessions: async (_source, _args, context) =>
      listOwnSessions(await domainRequest(context, 'Query.mySessions'), context.caller?.sessionId ?? null),
  },
  Mutation: {
    endSession: async (_source, { id }, context) =>
      endOwnSession(await domainRequest(context, 'Mutation.endSession'), context.app.sessions, id),
    endOtherSessions: async (_source, _args, context) =>
      endOtherOwnSessions(
        await domainRequest(context, 'Mutation.endOtherSessions'),
        context.app.sessions,
        context.caller?.sessionId ?? null,
      ),
    endUserSessions: async (_source, { userId }, context) =>
      endUserSessions(await domainRequest(context, 'Mutation.endUserSessions'), context.app.sessions, userId),
  },
} satisfies Resolvers;
