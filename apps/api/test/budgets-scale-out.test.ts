import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onPostgres, testTempDir } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedBudgetStores } from './support/cost.js';
import { startServiceProcesses, type ServiceProcesses } from './support/processes.js';
import { postGraphQL } from './support/service.js';

// Budgets shared by every instance (docs/graphql.md, "Budgets"): two api processes spend one bucket per caller, in
// PostgreSQL or in Redis, each from slices of a twentieth of its capacity. What they admit together over a window is
// at most capacity + refill x window + one slice per instance.

const FREE = { capacity: 400, restorePerSecond: 2 };
const BUDGETS = { guest: { capacity: 20, restorePerSecond: 0.5 }, plans: { FREE, PRO: { capacity: 4000, restorePerSecond: 20 } } };
const INSTANCES = 2;
const SLICE = FREE.capacity / 20;
const CONNECTIONS = 50;
/** Each connection's requests: together more than twice the capacity. */
const REQUESTS_PER_CONNECTION = 10;

/** A Redis database of this file's own: the guests' buckets (keyed by address) are not another test's. */
const stores = sharedBudgetStores(7);

async function flushRedis(url: string) {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { lazyConnect: true });
  await client.connect();
  await client.flushdb();
  await client.quit();
}

/** `{ __typename }` costs the minimum, 1: each admitted answer is one point admitted. */
const CHEAPEST = { query: '{ __typename }' };

describe.runIf(onPostgres('the PostgreSQL-only tests')).each(stores)('budgets shared by two api processes (%s)', (_store, env) => {
  let processes: ServiceProcesses;
  let token: (email: string) => Promise<string>;
  beforeAll(async () => {
    if ('REDIS_URL' in env) await flushRedis(env.REDIS_URL);
    const file = join(testTempDir(), 'budgets.json');
    writeFileSync(file, JSON.stringify(BUDGETS));
    // The first process trusts the loopback proxy's X-Forwarded-For; the second trusts no proxy.
    processes = await startServiceProcesses(INSTANCES, (_databaseUrl, index) => ({
      ...(env as Record<string, string>),
      API_BUDGET_FILE: file,
      ...(index === 0 ? { TRUST_PROXY: 'loopback' } : {}),
    }));
    token = async (email) => processes.token(await processes.userIdOf(email));
  }, 60_000);
  afterAll(() => processes?.stop());

  it(`one caller on ${CONNECTIONS} connections to each is admitted at most capacity + refill x window + a slice per instance; another caller's budget is untouched`, async () => {
    const carol = await token('carol@globex.test'); // globex is FREE
    const startedAt = performance.now();
    const answers = await Promise.all(
      processes.urls.flatMap((base) =>
        Array.from({ length: CONNECTIONS }, async () => {
          const codes: (string | undefined)[] = [];
          for (let i = 0; i < REQUESTS_PER_CONNECTION; i++) {
            const answer = await postGraphQL(`${base}/graphql`, CHEAPEST, { token: carol });
            expect(answer.status === 200 || answer.status === 429, `status ${answer.status}`).toBe(true);
            codes.push(answer.json.errors?.[0]?.extensions?.code);
          }
          return codes;
        }),
      ),
    );
    const seconds = (performance.now() - startedAt) / 1000;
    const codes = answers.flat();
    const admitted = codes.filter((code) => code === undefined).length;
    expect(codes.filter((code) => code !== undefined && code !== 'RATE_LIMITED')).toEqual([]);
    expect(admitted).toBeLessThanOrEqual(FREE.capacity + FREE.restorePerSecond * seconds + INSTANCES * SLICE);
    // Nothing is lost either: what the instances still hold is at most a slice each.
    expect(admitted).toBeGreaterThanOrEqual(FREE.capacity - INSTANCES * SLICE);

    const root = await postGraphQL(`${processes.urls[1]}/graphql`, CHEAPEST, { token: await token('root@latchkey.test') }); // in no organization: FREE
    expect(root.json.errors).toBeUndefined();
    expect(root.json.extensions.cost.throttleStatus.currentlyAvailable).toBeGreaterThanOrEqual(FREE.capacity - 1);
  });

  it('a guest behind the trusted proxy is counted by its forwarded address; where no proxy is trusted, a forwarded header changes nothing', async () => {
    const [trusting, trustingNone] = processes.urls as [string, string];
    const spend = async (base: string, forwardedFor: string) => {
      for (let i = 0; i < 100; i++) {
        const answer = await postGraphQL(`${base}/graphql`, CHEAPEST, { headers: { 'x-forwarded-for': forwardedFor } });
        if (answer.json.errors?.[0]?.extensions?.code === 'RATE_LIMITED') return i;
      }
      throw new Error('never refused');
    };
    // Behind the trusted proxy: one guest's address spent, its neighbour's untouched (on either bucket store).
    expect(await spend(trusting, '203.0.113.10')).toBeLessThanOrEqual(BUDGETS.guest.capacity + INSTANCES * 1);
    const neighbour = await postGraphQL(`${trusting}/graphql`, CHEAPEST, { headers: { 'x-forwarded-for': '203.0.113.11' } });
    expect(neighbour.json.errors).toBeUndefined();
    // Trusting no proxy: every forwarded address is the connection's own, one guest whatever the header says.
    await spend(trustingNone, '203.0.113.20');
    const other = await postGraphQL(`${trustingNone}/graphql`, CHEAPEST, { headers: { 'x-forwarded-for': '203.0.113.21' } });
    expect(other.json.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
  });
});
