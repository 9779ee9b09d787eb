// Baseline: a stock graphql-yoga server with DEFAULT options (only `schema`),
// so `pnpm bench` can compare latchkey against what yoga gives out of the box.
// Contract with bench/run.ts: listen on PORT at 127.0.0.1, print `listening <url>`.
import { createYoga } from 'graphql-yoga';
import { listenForBench, statusSchema } from './yoga-baseline.js';

const yoga = createYoga({ schema: statusSchema('stock-yoga') });

listenForBench(yoga, 4001);
