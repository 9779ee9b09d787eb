import { createSchema } from 'graphql-yoga';

// The status schema of the Yoga baselines (stock-yoga.ts, yoga-floor.ts): the same shape as latchkey's
// `status`, so all three answer the bench's `{ status { version } }`.

export function statusSchema(service: string) {
  return createSchema({
    typeDefs: /* GraphQL */ `
      type Query {
        status: Status!
      }
      type Status {
        service: String!
        version: String!
        time: String!
      }
    `,
    resolvers: {
      Query: {
        status: () => ({ service, version: '0.1.0', time: new Date().toISOString() }),
      },
    },
  });
}
