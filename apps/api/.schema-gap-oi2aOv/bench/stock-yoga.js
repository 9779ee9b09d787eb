// Baseline: a stock graphql-yoga server with DEFAULT options (only `schema`),
// so `pnpm bench` can compare latchkey against what yoga gives out of the box.
// Contract with bench/run.ts: listen on PORT at 127.0.0.1, print `listening <url>`.
import { createServer } from 'node:http';
import { createSchema, createYoga } from 'graphql-yoga';
const yoga = createYoga({
    schema: createSchema({
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
                status: () => ({ service: 'stock-yoga', version: '0.1.0', time: new Date().toISOString() }),
            },
        },
    }),
});
const port = Number(process.env.PORT ?? 4001);
const server = createServer(yoga);
server.listen(port, '127.0.0.1', () => {
    console.log(`listening http://127.0.0.1:${port}${yoga.graphqlEndpoint}`);
});
//# sourceMappingURL=stock-yoga.js.map