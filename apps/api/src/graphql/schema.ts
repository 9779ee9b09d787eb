import { createSchema } from 'graphql-yoga';
import type { Resolvers } from '../generated/resolvers.js';
import { typeDefs } from '../generated/type-defs.js';
import type { GraphQLContext } from './context.js';
import { accountResolvers } from './resolvers/account.js';
import { documentResolvers } from './resolvers/documents.js';
import { DateTime } from './resolvers/scalars.js';
import { statusResolvers } from './resolvers/status.js';
import { viewerResolvers } from './resolvers/viewer.js';

const resolvers: Resolvers[] = [{ DateTime }, statusResolvers, viewerResolvers, accountResolvers, documentResolvers];

export function buildSchema() {
  return createSchema<GraphQLContext>({ typeDefs, resolvers: resolvers as never });
}
