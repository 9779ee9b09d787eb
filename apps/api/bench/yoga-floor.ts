// Baseline: the least a server built on graphql-yoga can do for the status request, so `pnpm bench` shows how
// near latchkey's status path may come to its target while Yoga serves it. Yoga is set up as latchkey sets it up
// (the same DONE_BY_THE_HTTP_LAYER options: no request-size stream, CORS, multipart or landing page; and no GraphiQL
// or logging of Yoga's own), with no plugin of its own and no execution: one hook answers every operation with the
// status answer, after Yoga has read the request, found the document in its parse and validation caches and before
// it writes the result. What is left is Yoga's per-request pipeline and node's HTTP exchange.
// Contract with bench/run.ts: listen on PORT at 127.0.0.1, print `listening <url>`.
import { createYoga, type Plugin } from 'graphql-yoga';
import { DONE_BY_THE_HTTP_LAYER } from '../src/graphql/yoga-http-layer.js';
import { listenForBench, statusSchema } from './yoga-baseline.js';

const answer = { data: { status: { version: '0.1.0' } } };
const answerWithoutExecuting: Plugin = {
  onExecute({ setResultAndStopExecution }) {
    setResultAndStopExecution(answer);
  },
};

const yoga = createYoga({
  schema: statusSchema('yoga-floor'),
  plugins: [answerWithoutExecuting],
  ...DONE_BY_THE_HTTP_LAYER,
  graphiql: false,
  logging: false,
});

listenForBench(yoga, 4003);
