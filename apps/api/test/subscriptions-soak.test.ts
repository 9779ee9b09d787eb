import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { seedDemoData } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoOf, type Demo } from './support/demo.js';
import { postGraphQL, startTestService, type TestService } from './support/service.js';
import { overWebSocket, wsClient, type Received } from './support/subscriptions.js';

// A full garbage collection on demand, to compare live heap sizes rather than garbage.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;

function liveHeap(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

const CONNECTIONS = 20;
const PER_CONNECTION = 20;
const EVENTS = 10;

let service: TestService;
let demo: Demo;
beforeAll(async () => {
  // Quiet logs (the test keeps them in memory) and room for one account's 400 subscriptions.
  service = await startTestService({
    LOG_LEVEL: 'warn',
    SUBSCRIPTIONS_PER_USER: '1000',
    SUBSCRIPTIONS_PER_CONNECTION: String(PER_CONNECTION),
  });
  await seedDemoData(service.database);
  demo = await demoOf(service);
});
afterAll(() => service?.stop());

/** Opens `connections` x `perConnection` subscriptions, makes `events` changes, waits for every delivery, closes all. */
async function round(connections: number, perConnection: number, events: number) {
  const token = await demo.token('alice');
  const clients = Array.from({ length: connections }, () => wsClient(service.graphqlUrl, token));
  const subscribers: Received[] = clients.flatMap((client) =>
    Array.from({ length: perConnection }, () =>
      overWebSocket(client, { query: 'subscription { documentChanged(organization: "acme") { kind document { title status } } }' }),
    ),
  );
  await expect.poll(() => service.subscriptions.size(), { timeout: 30_000, interval: 10 }).toBe(subscribers.length);
  for (let i = 0; i < events; i++) {
    const res = await postGraphQL(
      service.graphqlUrl,
      {
        query: `mutation { createDocument(input: { organization: "acme", title: "Soak ${Date.now()} ${i} ${Math.random()}" }) { document { id } } }`,
      },
      { token },
    );
    expect(res.status).toBe(200);
  }
  await Promise.all(subscribers.map((subscriber) => subscriber.waitFor(events, 60_000)));
  const delivered = subscribers.reduce((total, subscriber) => total + subscriber.results.length, 0);
  const open = liveHeap();
  for (const subscriber of subscribers) subscriber.dispose();
  await Promise.all(clients.map((client) => client.dispose()));
  await expect.poll(() => service.subscriptions.size() + service.app.webSocketClients(), { timeout: 30_000, interval: 10 }).toBe(0);
  return { delivered, open, subscribers: subscribers.length };
}

describe('soak: many subscribers, a bounded number of events (memory returns to its baseline)', () => {
  it(`${CONNECTIONS * PER_CONNECTION} subscribers over ${CONNECTIONS} WebSocket connections each receive all ${EVENTS} events; after they leave, the heap is back at its baseline, round after round`, async () => {
    // A small round first: modules, caches and JIT settle, so the baseline is the steady state.
    await round(4, 5, 2);
    const baseline = liveHeap();
    const rounds = [];
    for (let i = 0; i < 2; i++) {
      const { delivered, open, subscribers } = await round(CONNECTIONS, PER_CONNECTION, EVENTS);
      expect(delivered).toBe(subscribers * EVENTS);
      expect(service.subscriptions.size()).toBe(0);
      expect(service.app.webSocketClients()).toBe(0);
      rounds.push({ subscribers, deliveries: delivered, whileOpenMiB: +(open / MiB).toFixed(1), afterMiB: +(liveHeap() / MiB).toFixed(1) });
    }
    const after = liveHeap();
    process.stdout.write(
      `[latchkey soak] ${JSON.stringify({ baselineMiB: +(baseline / MiB).toFixed(1), rounds, retainedKiB: Math.round((after - baseline) / 1024) })}\n`,
    );
    // What is held while they are open is released with them: a few MiB of slack for caches and pools, and the
    // second round leaves no more behind than the first (nothing grows with the number of subscribers served).
    const open = rounds[0]!.whileOpenMiB * MiB;
    expect(open).toBeGreaterThan(baseline);
    expect(after - baseline).toBeLessThan(8 * MiB);
    expect(rounds[1]!.afterMiB - rounds[0]!.afterMiB).toBeLessThan(2);
  }, 180_000);
});
