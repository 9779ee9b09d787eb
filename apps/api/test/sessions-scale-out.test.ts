import { onPostgres } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceProcesses, type ServiceProcesses } from './support/processes.js';
import { postGraphQL } from './support/service.js';
import { signInThroughDemo } from './support/sessions.js';
import { overSse, overWebSocket, sseClient, wsClient } from './support/subscriptions.js';

const CHANGED = 'subscription { documentChanged(organization: "acme") { kind } }';

describe.runIf(onPostgres('the PostgreSQL-only tests'))('issue 17 point 1: a session ended on one instance, on a second instance', () => {
  let processes: ServiceProcesses;
  let first: string;
  let second: string;

  beforeAll(async () => {
    // Two processes of one service; browsers sign in at the first (PUBLIC_URL), the API is also called at the second.
    processes = await startServiceProcesses(2, { TRUST_PROXY: 'loopback' }, { publicUrlOnFirst: true });
    [first, second] = [processes.publicUrl, processes.urls[1]!];
  }, 60_000);
  afterAll(() => processes?.stop());

  it('its tokens are refused by the second instance within 5 s, and its open subscriptions there (WebSocket and SSE) end with UNAUTHENTICATED without any event', async () => {
    const kept = await signInThroughDemo(first, processes.dataDir, 'alice@acme.test', { forwardedFor: '198.51.100.1' });
    const ended = await signInThroughDemo(first, processes.dataDir, 'alice@acme.test', { forwardedFor: '198.51.100.2' });
    const viewer = (token: string) => postGraphQL(`${second}/graphql`, { query: '{ viewer { subject } }' }, { token });
    expect((await viewer(ended.accessToken)).status).toBe(200);

    const ws = wsClient(`${second}/graphql`, ended.accessToken);
    const overWs = overWebSocket(ws, { query: CHANGED });
    const overHttp = overSse(sseClient(`${second}/graphql`, ended.accessToken), { query: CHANGED });
    // Both streams are open (a refused subscription would have ended already).
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(overWs.error ?? overHttp.error).toBeUndefined();

    const endedAt = performance.now();
    const answer = await postGraphQL(
      `${first}/graphql`,
      { query: 'mutation ($id: ID!) { endSession(id: $id) }', variables: { id: ended.sessionId } },
      { token: kept.accessToken },
    );
    expect(answer.json).toEqual({ data: { endSession: true } });

    let refusedAfterMs = Number.POSITIVE_INFINITY;
    while (performance.now() - endedAt < 6000) {
      if ((await viewer(ended.accessToken)).status === 401) {
        refusedAfterMs = performance.now() - endedAt;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(refusedAfterMs).toBeLessThan(5000);
    expect((await viewer(kept.accessToken)).status).toBe(200);

    await Promise.all([overWs.ended(5000), overHttp.ended(5000)]);
    const endedBy = (received: typeof overWs) =>
      received.results.at(-1)?.errors?.[0]?.extensions?.['code'] ??
      (received.error as { extensions?: { code?: string } })?.extensions?.code;
    for (const received of [overWs, overHttp]) {
      expect(received.results.filter((result) => result.data)).toEqual([]); // no event came
      expect(endedBy(received)).toBe('UNAUTHENTICATED');
    }
    await ws.dispose();
  });
});
