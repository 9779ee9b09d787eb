import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runsHere, testTempDir } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/browser-session.js';
import { sample, scrapeMetricsUntil } from './support/metrics.js';
import { startServiceProcesses, type ServiceProcesses } from './support/processes.js';
import { postGraphQL } from './support/service.js';

// Budgets in Redis survive Redis stopping (docs/graphql.md, "Budgets"): each instance decides alone meanwhile with a
// bucket of its own, counts those decisions in latchkey_budget_local_decisions_total, logs the outage once, and goes
// back to the shared buckets when Redis answers again. A private Redis server, so that stopping it stops no one else.

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
const FAULT = 'budgets: the shared buckets (Redis) do not answer; each instance decides alone until they do';
const RECOVERED = 'budgets: the shared buckets (Redis) answer again';
/**
 * Buckets that refill faster than this load spends them, so nothing is refused, but small enough that a slice (a
 * twentieth) is spent every few hundred operations: the instance goes back to Redis all through the load.
 */
const SIZE = { capacity: 20_000, restorePerSecond: 20_000 };
const BUDGETS = { guest: SIZE, plans: { FREE: SIZE, PRO: SIZE } };

/** A Redis server of this file's own on `port`, keeping nothing on disk; resolves once it accepts connections. */
function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
  });
}

const stopped = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

describe.runIf(
  runsHere('the Redis outage test', hasRedisServer ? undefined : 'redis-server is not installed (apt-get install redis-server)'),
)('budgets in Redis while Redis stops and starts again', () => {
  let redisPort: number;
  let redis: ChildProcess;
  let processes: ServiceProcesses;
  let metricsUrl: string;
  beforeAll(async () => {
    redisPort = await freePort();
    redis = await startRedis(redisPort);
    const file = join(testTempDir(), 'budgets.json');
    writeFileSync(file, JSON.stringify(BUDGETS));
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}`;
    processes = await startServiceProcesses(1, {
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'info',
      API_BUDGET_FILE: file,
    });
  }, 60_000);
  afterAll(async () => {
    await processes?.stop();
    if (redis) await stopped(redis);
  });

  const logged = (message: string) => processes.logLines(0).filter((line) => line['msg'] === message).length;

  it('no answer is a 5xx, the local decisions are counted, the outage is logged once, and the shared buckets are used again after it', async () => {
    const token = await processes.token(await processes.userIdOf('carol@globex.test'));
    const graphql = `${processes.urls[0]}/graphql`;
    const statuses: number[] = [];
    const errors: string[] = [];
    let loading = true;
    const load = Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        while (loading) {
          const query = i % 2 ? '{ __typename }' : '{ viewer { subject } }';
          const answer = await postGraphQL(graphql, { query }, i % 2 ? {} : { token }).catch((error: Error) => ({
            status: 0,
            text: error.message,
            json: { errors: [error.message] },
          }));
          statuses.push(answer.status);
          if (answer.json.errors) errors.push(answer.text);
        }
      }),
    );
    const answered = async (more: number) => {
      const target = statuses.length + more;
      await expect.poll(() => statuses.length, { timeout: 30_000, interval: 10 }).toBeGreaterThanOrEqual(target);
    };
    try {
      await answered(50);
      await stopped(redis);
      await scrapeMetricsUntil(metricsUrl, (text) => sample(text, 'latchkey_budget_local_decisions_total') > 0, 'local decisions');
      await answered(100);
      expect(logged(FAULT)).toBe(1);
      redis = await startRedis(redisPort);
      await expect.poll(() => logged(RECOVERED), { timeout: 30_000, interval: 20 }).toBe(1);
      await answered(50);
    } finally {
      loading = false;
      await load;
    }
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(errors).toEqual([]);
    expect(logged(FAULT)).toBe(1);
  }, 120_000);
});
