// Baseline: a stock graphql-yoga server with DEFAULT options (only `schema`),
// so `pnpm bench` can compare latchkey against what yoga gives out of the box.
// Contract with bench/run.ts: listen on PORT at 127.0.0.1, print `listening <url>`.
import { createServer } from 'node:http';
import { createYoga } from 'graphql-yoga';
import { statusSchema } from './status-schema.js';

const yoga = createYoga({ schema: statusSchema('stock-yoga') });

const port = Number(process.env.PORT ?? 4001);
const server = createServer(yoga);
server.listen(port, '127.0.0.1', () => {
  console.log(`listening http://127.0.0.1:${port}${yoga.graphqlEndpoint}`);
});
