import { onPostgres, redisForTests } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceProcesses, type ServiceProcesses } from './support/processes.js';
import { postGraphQL } from './support/service.js';
import { overSse, overWebSocket, sleep, sseClient, wsClient } from './support/subscriptions.js';

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
    beforeAll(async () => {
      processes = await startServiceProcesses(2, env as Record<string, string>);
      alice = await processes.token(await processes.userIdOf('alice@acme.test'));
    }, 60_000);
    afterAll(() => processes?.stop());

    it('a mutation on one process reaches subscribers on the other (graphql-ws and SSE) and on itself', async () => {
      const [one, two] = processes.urls as [string, string];
      const ws = wsClient(`${two}/graphql`, alice);
      const overWs = overWebSocket(ws, { query: CHANGED });
      const overHttp = overSse(sseClient(`${two}/graphql`, alice), { query: CHANGED });
      const local = overSse(sseClient(`${one}/graphql`, alice), { query: CHANGED });
      await sleep(500);
      const created = await postGraphQL(
        `${one}/graphql`,
        { query: 'mutation { createDocument(input: { organization: "acme", title: "Across processes" }) { document { id } } }' },
        { token: alice },
      );
      expect(created.status).toBe(200);
      for (const received of [overWs, overHttp, local]) {
        await received.waitFor(1);
        expect(received.results[0]).toEqual({ data: { documentChanged: { kind: 'CREATED', document: { title: 'Across processes' } } } });
      }
      for (const received of [overWs, overHttp, local]) received.dispose();
      await ws.dispose();
    });
  },
);
