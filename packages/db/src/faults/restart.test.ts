import { tmpdir } from 'node:os';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createDatabase } from '../client.js';
import { rowsOf } from '../rows.js';
import { privateClusterUnavailable, runsHere, startPrivateCluster } from '../testing/index.js';
import { PROBE_INTERVAL_MS } from './health.js';
import { reconnectBackoffSeconds } from './resilient-pool.js';

// A real restart of PostgreSQL (pg_ctl stop -m fast, then start), not a proxy cutting connections: the pool's
// connections fail to connect over and over while the server is gone, and must not keep waiting once it is back.

describe('recovery from a real PostgreSQL restart', () => {
  it('a pooled connection that failed to connect waits at most the probe interval before it tries again, however often it failed', () => {
    for (let retries = 0; retries <= 30; retries++) expect(reconnectBackoffSeconds(retries)).toBeLessThanOrEqual(PROBE_INTERVAL_MS / 1000);
    // The first retries keep postgres-js's own short, jittered waits (3^retries / 100 s, half to all of it).
    expect(reconnectBackoffSeconds(1)).toBeLessThanOrEqual(0.03);
  });

  it.runIf(runsHere('the restart of a private PostgreSQL cluster', privateClusterUnavailable()))(
    'stopped under readiness checks and started again: the first readiness ping and the first query after it accepts connections succeed',
    async () => {
      const cluster = await startPrivateCluster();
      const database = await createDatabase({ url: cluster.url, dataDir: tmpdir(), timeoutMs: 5000 });
      try {
        expect(await database.ping(5000)).toBe(true);
        await cluster.stop();
        // Readiness checks on the pool while the server is gone, one after another as a load balancer makes them (25,
        // each given 300 ms), and until the outage is known: the pool's connections fail to connect again and again
        // (postgres-js's own wait between attempts would grow past 3 s meanwhile, and to 20 s in a longer outage).
        for (let check = 0; check < 25 || database.health.available; check++) expect(await database.ping(300)).toBe(false);
        const back = new Promise<void>((resolve) => database.health.onChange((available) => available && resolve()));
        await cluster.start();
        // The first ping after the server accepts connections again succeeds: 3 s is far above a wait of at most the
        // probe interval (and a local connect), and below what the uncapped backoff would wait.
        expect(await database.ping(3000)).toBe(true);
        await back;
        const rows = rowsOf<{ one: number }>(await database.db.execute(sql`select 1 as one`));
        expect(rows).toEqual([{ one: 1 }]);
      } finally {
        await database.close();
        await cluster.destroy();
      }
    },
    120_000,
  );
});
