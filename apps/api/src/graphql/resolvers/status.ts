import type { Resolvers } from '../../generated/resolvers.js';

/** Status has nothing to load: its fields read the app's identity and the clock. */
export type StatusSource = Record<string, never>;

const STATUS: StatusSource = {};

export const statusResolvers: Resolvers = {
  Query: {
    status: () => STATUS,
  },
  Status: {
    service: (_source, _args, { app }) => app.service.name,
    version: (_source, _args, { app }) => app.service.version,
    time: () => new Date(),
  },
};
