import { createServer } from 'node:http';
import { createSchema, type YogaServerInstance } from 'graphql-yoga';

// What the Yoga baselines (stock-yoga.ts, yoga-floor.ts) share: the status schema, the same shape as latchkey's
// `status` so all three answer the bench's `{ status { version } }`, and how they listen.

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

/** Contract with bench/run.ts: listen on PORT (or `fallbackPort`) at 127.0.0.1, print `listening <url>`. */
export function listenForBench(yoga: YogaServerInstance<object, object>, fallbackPort: number): void {
  const port = Number(process.env.PORT ?? fallbackPort);
  createServer(yoga).listen(port, '127.0.0.1', () => {
    console.log(`listening http://127.0.0.1:${port}${yoga.graphqlEndpoint}`);
  });
}
