import { privateClusterUnavailable, startPrivateCluster } from '@latchkey/db/testing';
import { startServiceProcesses } from '../test/support/processes.js';
import { graphqlProbe, record, runLoad, sleep, type Outcome, type Probe } from './load.js';

export interface PgRestartFigures {
  scenario: string;
  /** how long the server was stopped (between `pg_ctl stop -m fast` returning and `pg_ctl start`) */
  stoppedSeconds: number;
  /** from the database accepting connections again (`pg_ctl start -w` returned) to the first /readyz 200 */
  readyAfterBackMs: number;
  /** ... to the first `{ me }` answered from the database */
  firstQueryAfterBackMs: number;
  /** the goal for both */
  goalMs: number;
  /** requests answered SERVICE_UNAVAILABLE while it was away (refused, bounded, honest) */
  serviceUnavailable: number;
  /** any 5xx but 503, INTERNAL_SERVER_ERROR, or no answer, during the whole run */
  serverErrors: number;
}

/** The first outcome of `kind` that succeeded at or after `from`, as ms after `from` (NaN: none did). */
function firstSuccessAfter(outcomes: Outcome[], kind: string, from: number): number {
  const first = outcomes
    .filter((o) => o.kind === kind && o.startedAt >= from && o.status === 200 && o.code === undefined)
    .sort((a, b) => a.endedAt - b.endedAt)[0];
  return first ? Math.round(first.endedAt - from) : Number.NaN;
}

/**
 * A real PostgreSQL restart, not a proxy: a private cluster (initdb into a temporary directory, its own port) is
 * stopped with `pg_ctl stop -m fast` under load for `seconds`, then started again. One production instance; 8
 * clients asking `{ me }` (the database) and `{ status }` (none), and a load balancer's /readyz every 50 ms.
 */
export async function pgRestartScenario(seconds: number): Promise<PgRestartFigures> {
  const missing = privateClusterUnavailable();
  if (missing) throw new Error(`pg-restart: ${missing}`);
  const cluster = await startPrivateCluster();
  // The instance gets a database of its own on the private cluster (startServiceProcesses creates it on DATABASE_URL's server).
  const admin = process.env['DATABASE_URL'];
  process.env['DATABASE_URL'] = cluster.url;
  let processes: Awaited<ReturnType<typeof startServiceProcesses>> | undefined;
  try {
    processes = await startServiceProcesses(1, { NODE_ENV: 'production', LOG_LEVEL: 'error' });
    const [base] = processes.urls as [string];
    const token = await processes.token(await processes.userIdOf('alice@acme.test'));
    const probes: Probe[] = [
      graphqlProbe('me', `${base}/graphql`, '{ me { email } }', token),
      graphqlProbe('status', `${base}/graphql`, '{ status { version } }'),
    ];
    let turn = 0;
    let running = true;
    const load = runLoad(
      8,
      () => probes[turn++ % probes.length],
      () => running,
    );
    const readiness = (async () => {
      const outcomes: Outcome[] = [];
      while (running) {
        outcomes.push(await record({ kind: 'readyz', send: () => fetch(`${base}/readyz`) }));
        await sleep(50);
      }
      return outcomes;
    })();
    await sleep(2000);
    await cluster.stop();
    const stoppedAt = performance.now();
    await sleep(seconds * 1000);
    await cluster.start();
    const backAt = performance.now();
    await sleep(5000);
    running = false;
    const outcomes = [...(await load), ...(await readiness)];
    return {
      scenario: 'restart: a real PostgreSQL stop -m fast and start',
      stoppedSeconds: Math.round((backAt - stoppedAt) / 100) / 10,
      readyAfterBackMs: firstSuccessAfter(outcomes, 'readyz', backAt),
      firstQueryAfterBackMs: firstSuccessAfter(outcomes, 'me', backAt),
      goalMs: 2000,
      serviceUnavailable: outcomes.filter((o) => o.code === 'SERVICE_UNAVAILABLE').length,
      serverErrors: outcomes.filter(
        (o) => o.kind !== 'readyz' && ((o.status >= 500 && o.status !== 503) || o.code === 'INTERNAL_SERVER_ERROR' || o.status === 0),
      ).length,
    };
  } finally {
    await processes?.stop();
    if (admin === undefined) delete process.env['DATABASE_URL'];
    else process.env['DATABASE_URL'] = admin;
    await cluster.destroy();
  }
}
