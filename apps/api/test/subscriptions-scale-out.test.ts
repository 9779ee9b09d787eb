import { onPostgres, redisForTests } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/browser-session.js';
import { COST_REPORTED } from './support/cost.js';
import { untilSubscriptionsOpen } from './support/metrics.js';
import { startServiceProcesses, type ServiceProcesses } from './support/processes.js';
import { postGraphQL } from './support/service.js';
import { overSse, overWebSocket, sseClient, wsClient } from './support/subscriptions.js';

const CHANGED = 'subscription { documentChanged(organization: "acme") { kind document { title } } }';

const buses = [
  ['PostgreSQL LISTEN/NOTIFY', {}],
  ...((redisUrl) => (redisUrl ? [['Redis pub/sub', { REDIS_URL: redisUrl }] as const] : []))(
    onPostgres('the PostgreSQL-only tests') ? redisForTests('the Redis event-bus tests') : undefined,
  ),
] as const;

describe.runIf(onPostgres('the PostgreSQL-only tests')).each(buses)(
  'fan-out across two api processes on one PostgreSQL (%s)',
  (_bus, env) => {
    let processes: ServiceProcesses;
    let alice: string;
    // Each process's metrics listener tells how many subscriptions it holds.
    let metricsUrls: string[];
    beforeAll(async () => {
      const metricsPorts = [await freePort(), await freePort()];
      metricsUrls = metricsPorts.map((port) => `http://127.0.0.1:${port}`);
      processes = await startServiceProcesses(2, (_databaseUrl, index) => ({
        ...(env as Record<string, string>),
        METRICS_PORT: String(metricsPorts[index]),
      }));
      alice = await processes.token(await processes.userIdOf('alice@acme.test'));
    }, 60_000);
    afterAll(() => processes?.stop());

    it('a mutation on one process reaches subscribers on the other (graphql-ws and SSE) and on itself', async () => {
      const [one, two] = processes.urls as [string, string];
      const ws = wsClient(`${two}/graphql`, alice);
      const overWs = overWebSocket(ws, { query: CHANGED });
      const overHttp = overSse(sseClient(`${two}/graphql`, alice), { query: CHANGED });
      const local = overSse(sseClient(`${one}/graphql`, alice), { query: CHANGED });
      // The change is made once both processes hold every subscription (events from then on are theirs).
      await untilSubscriptionsOpen(metricsUrls[1]!, 2);
      await untilSubscriptionsOpen(metricsUrls[0]!, 1);
      const created = await postGraphQL(
        `${one}/graphql`,
        { query: 'mutation { createDocument(input: { organization: "acme", title: "Across processes" }) { document { id } } }' },
        { token: alice },
      );
      expect(created.status).toBe(200);
      for (const received of [overWs, overHttp, local]) {
        await received.waitFor(1);
        expect(received.results[0]).toEqual({
          data: { documentChanged: { kind: 'CREATED', document: { title: 'Across processes' } } },
          extensions: COST_REPORTED,
        });
      }
      for (const received of [overWs, overHttp, local]) received.dispose();
      await ws.dispose();
    });
  },
);
