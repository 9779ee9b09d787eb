import { startTcpProxy } from '@latchkey/db/testing';
import { startServiceProcesses } from '../test/support/processes.js';
import { graphqlProbe, runLoad, sleep, type Probe } from './load.js';

export interface OutageFigures {
  scenario: string;
  outageSeconds: number;
  databaseTimeoutMs: number;
  /** requests started while the database was away */
  requestsDuringOutage: number;
  /** the longest of them, start to answer */
  longestRequestMs: number;
  /** of them, how many ended later than their deadline (DATABASE_TIMEOUT, +100 ms of slack) */
  pastDeadline: number;
  /** answers with SERVICE_UNAVAILABLE (503, or the code in a 200) */
  serviceUnavailable: number;
  /** refusals of a known outage answered within 100 ms, of all SERVICE_UNAVAILABLE answers */
  refusedWithin100ms: number;
  /** `{ status }` (needs no database) answered 200, of those sent during the outage */
  statusAnswered: string;
  /** any 5xx but 503, or INTERNAL_SERVER_ERROR, during the whole run */
  serverErrors: number;
  /** from the database's return to the first successful `{ me }` */
  secondsToRecovery: number;
}

/**
 * The database goes away under load for `outageSeconds`: refused and reset (`drop`, a stopped or restarting
 * PostgreSQL) or black-holed (a partition). One production instance, 16 clients mixing GraphQL that needs the
 * database, REST, and `{ status }` that needs none.
 */
export async function outageScenario(kind: 'drop' | 'blackhole', outageSeconds: number): Promise<OutageFigures> {
  const target = new URL(process.env['DATABASE_URL']!);
  const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  const processes = await startServiceProcesses(1, (url) => ({
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
    DATABASE_URL: proxy.routeUrl(url),
  }));
  const databaseTimeoutMs = 5000;
  try {
    const [base] = processes.urls as [string];
    const token = await processes.token(await processes.userIdOf('alice@acme.test'));
    const probes: Probe[] = [
      graphqlProbe('me', `${base}/graphql`, '{ me { email } }', token),
      { kind: 'rest', send: () => fetch(`${base}/api/documents?first=5`, { headers: { authorization: `Bearer ${token}` } }) },
      graphqlProbe('status', `${base}/graphql`, '{ status { version } }'),
    ];
    let turn = 0;
    let running = true;
    const load = runLoad(
      16,
      () => probes[turn++ % probes.length],
      () => running,
    );
    await sleep(2000);
    const outageAt = performance.now();
    if (kind === 'drop') await proxy.drop();
    else proxy.blackhole();
    await sleep(outageSeconds * 1000);
    await proxy.restore();
    const restoredAt = performance.now();
    let recoveredAt: number | undefined;
    while (recoveredAt === undefined && performance.now() - restoredAt < 30_000) {
      const answer = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: '{"query":"{ me { email } }"}',
      });
      const body = (await answer.json()) as { data?: { me?: { email?: string } } };
      if (body.data?.me?.email) recoveredAt = performance.now();
      else await sleep(50);
    }
    await sleep(2000);
    running = false;
    const outcomes = await load;
    const during = outcomes.filter((o) => o.startedAt >= outageAt && o.startedAt < restoredAt);
    const unavailable = outcomes.filter((o) => o.code === 'SERVICE_UNAVAILABLE');
    const statusDuring = during.filter((o) => o.kind === 'status');
    return {
      scenario: kind === 'drop' ? 'outage: refused/reset' : 'outage: black hole',
      outageSeconds,
      databaseTimeoutMs,
      requestsDuringOutage: during.length,
      longestRequestMs: Math.round(Math.max(0, ...during.map((o) => o.endedAt - o.startedAt))),
      pastDeadline: during.filter((o) => o.endedAt - o.startedAt > databaseTimeoutMs + 100).length,
      serviceUnavailable: unavailable.length,
      refusedWithin100ms: unavailable.filter((o) => o.endedAt - o.startedAt < 100).length,
      statusAnswered: `${statusDuring.filter((o) => o.status === 200).length}/${statusDuring.length}`,
      serverErrors: outcomes.filter((o) => (o.status >= 500 && o.status !== 503) || o.code === 'INTERNAL_SERVER_ERROR' || o.status === 0)
        .length,
      secondsToRecovery: recoveredAt === undefined ? Number.NaN : Math.round((recoveredAt - restoredAt) / 10) / 100,
    };
  } finally {
    await processes.stop();
    await proxy.close();
  }
}
