import { onPostgres } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/browser-session.js';
import { startServiceProcesses, type ServiceProcesses } from './support/processes.js';
import { postGraphQL } from './support/service.js';
import { signInThroughDemo } from './support/sessions.js';
import { overSse, overWebSocket, sseClient, wsClient } from './support/subscriptions.js';
import { COST_REPORTED } from './support/cost.js';

const CHANGED = 'subscription { documentChanged(organization: "acme") { kind } }';

describe.runIf(onPostgres('the PostgreSQL-only tests'))('a session ended on one instance, on a second instance', () => {
  let processes: ServiceProcesses;
  let first: string;
  let second: string;
  /** the second instance's metrics listener: how many subscriptions it holds open */
  let secondMetrics: string;

  beforeAll(async () => {
    // Two processes of one service; browsers sign in at the first (PUBLIC_URL), the API is also called at the second.
    const metricsPort = await freePort();
    secondMetrics = `http://127.0.0.1:${metricsPort}/metrics`;
    processes = await startServiceProcesses(
      2,
      (_url, index) => ({ TRUST_PROXY: 'loopback', ...(index === 1 ? { METRICS_PORT: String(metricsPort) } : {}) }),
      { publicUrlOnFirst: true },
    );
    [first, second] = [processes.publicUrl, processes.urls[1]!];
  }, 60_000);
  afterAll(() => processes?.stop());

  // "Within 5 s" is the reading interval of the ended list (a second), proved with an injected clock on the list
  // itself (packages/auth ended-sessions.test.ts); here the second instance's refusal is the event waited for, with a
  // deadline far above any real latency.
  it('its tokens are refused by the second instance from its next read of the ended list, and its open subscriptions there (WebSocket and SSE) end with UNAUTHENTICATED without any event', async () => {
    const kept = await signInThroughDemo(first, processes.dataDir, 'alice@acme.test', { forwardedFor: '198.51.100.1' });
    const ended = await signInThroughDemo(first, processes.dataDir, 'alice@acme.test', { forwardedFor: '198.51.100.2' });
    const viewer = (token: string) => postGraphQL(`${second}/graphql`, { query: '{ viewer { subject } }' }, { token });
    expect((await viewer(ended.accessToken)).status).toBe(200);

    const ws = wsClient(`${second}/graphql`, ended.accessToken);
    const overWs = overWebSocket(ws, { query: CHANGED });
    const overHttp = overSse(sseClient(`${second}/graphql`, ended.accessToken), { query: CHANGED });
    // Both streams are open: the second instance counts them (a refused subscription is never counted).
    const openThere = async () => {
      const text = await (await fetch(secondMetrics)).text();
      return Number(/^latchkey_subscriptions_open (\S+)$/m.exec(text)?.[1]);
    };
    await expect.poll(openThere, { timeout: 20_000, interval: 50 }).toBe(2);
    expect(overWs.error ?? overHttp.error).toBeUndefined();

    const answer = await postGraphQL(
      `${first}/graphql`,
      { query: 'mutation ($id: ID!) { endSession(id: $id) }', variables: { id: ended.sessionId } },
      { token: kept.accessToken },
    );
    expect(answer.json).toEqual({ data: { endSession: true }, extensions: COST_REPORTED });

    await expect.poll(async () => (await viewer(ended.accessToken)).status, { timeout: 20_000, interval: 100 }).toBe(401);
    expect((await viewer(kept.accessToken)).status).toBe(200);

    await Promise.all([overWs.ended(20_000), overHttp.ended(20_000)]);
    const endedBy = (received: typeof overWs) =>
      received.results.at(-1)?.errors?.[0]?.extensions?.['code'] ??
      (received.error as { extensions?: { code?: string } })?.extensions?.code;
    for (const received of [overWs, overHttp]) {
      expect(received.results.filter((result) => result.data)).toEqual([]); // no event came
      expect(endedBy(received)).toBe('UNAUTHENTICATED');
    }
    await ws.dispose();
  }, 60_000);
});
