import type { Resolvers } from '../../generated/resolvers.js';

/** Status has nothing to load: its fields read the app's identity and the clock. */
export type StatusSource = Record<string, never>;

const STATUS: StatusSource = {};

/** Fields these resolvers answer without the database (they keep answering during an outage). */
export const statusDatabaseFree = ['Query.status', 'Status.service', 'Status.version', 'Status.serverTime', 'Status.time'];

export const statusResolvers = {
  Query: {
    status: () => STATUS,
  },
  Status: {
    service: (_source, _args, { app }) => app.service.name,
    version: (_source, _args, { app }) => app.service.version,
    serverTime: () => new Date(),
    // Deprecated for `serverTime` (schema/status.graphql); answered alike while clients still ask for it.
    time: () => new Date(),
  },
} satisfies Resolvers;
