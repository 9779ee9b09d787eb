import { startTcpProxy } from '@latchkey/db/testing';
import { startServiceProcesses } from '../test/support/processes.js';
import { graphqlProbe, runLoad, sleep } from './load.js';
/**
 * The database goes away under load for `outageSeconds`: refused and reset (`drop`, a stopped or restarting
 * PostgreSQL) or black-holed (a partition). One production instance, 16 clients mixing GraphQL that needs the
 * database, REST, and `{ status }` that needs none.
 */
export async function outageScenario(kind, outageSeconds) {
    const target = new URL(process.env['DATABASE_URL']);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const processes = await startServiceProcesses(1, (url) => ({
        NODE_ENV: 'production',
        LOG_LEVEL: 'error',
        DATABASE_URL: proxy.routeUrl(url),
    }));
    const databaseTimeoutMs = 5000;
    try {
        const [base] = processes.urls;
        const token = await processes.token(await processes.userIdOf('alice@acme.test'));
        const probes = [
            graphqlProbe('me', `${base}/graphql`, '{ me { email } }', token),
            { kind: 'rest', send: () => fetch(`${base}/api/documents?first=5`, { headers: { authorization: `Bearer ${token}` } }) },
            graphqlProbe('status', `${base}/graphql`, '{ status { version } }'),
        ];
        let turn = 0;
        let running = true;
        const load = runLoad(16, () => probes[turn++ % probes.length], () => running);
        await sleep(2000);
        const outageAt = performance.now();
        if (kind === 'drop')
            await proxy.drop();
        else
            proxy.blackhole();
        await sleep(outageSeconds * 1000);
        await proxy.restore();
        const restoredAt = performance.now();
        let recoveredAt;
        while (recoveredAt === undefined && performance.now() - restoredAt < 30_000) {
            const answer = await fetch(`${base}/graphql`, {
                method: 'POST',
                headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
                body: '{"query":"{ me { email } }"}',
            });
            const body = (await answer.json());
            if (body.data?.me?.email)
                recoveredAt = performance.now();
            else
                await sleep(50);
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
    }
    finally {
        await processes.stop();
        await proxy.close();
    }
}
//# sourceMappingURL=outage.js.map