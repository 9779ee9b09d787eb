import { startTcpProxy } from '@latchkey/db/testing';
import { startServiceProcesses } from '../test/support/processes.js';
import { overWebSocket, wsClient } from '../test/support/subscriptions.js';
import { graphqlProbe, record, sleep } from './load.js';

export interface RestartFigures {
  scenario: string;
  /** how long the database was away */
  restartSeconds: number;
  /** documents instance A committed during and after the restart (with retries while it was refused) */
  committed: number;
  /** of them, events instance B's subscriber never received */
  eventsLost: number;
  /** events received twice */
  duplicates: number;
  /** the subscription ended (interrupted or errored) instead of carrying on */
  subscriptionEnded: boolean;
}

/**
 * The restart measurement: PostgreSQL restarts (connections reset and refused for `seconds`) while a
 * subscription is open on instance B; instance A creates documents through it all, retrying while refused.
 * Afterwards every committed change must have reached B once.
 */
export async function restartScenario(seconds: number): Promise<RestartFigures> {
  const target = new URL(process.env['DATABASE_URL']!);
  const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  const processes = await startServiceProcesses(2, (url) => ({
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
    DATABASE_URL: proxy.routeUrl(url),
  }));
  const [a, b] = processes.urls as [string, string];
  const token = await processes.token(await processes.userIdOf('alice@acme.test'));
  const client = wsClient(`${b}/graphql`, token);
  try {
    const received = overWebSocket(client, { query: 'subscription { documentChanged(organization: "acme") { kind document { title } } }' });
    await sleep(500);
    const prefix = `restart-${Date.now()}`;
    const mutation =
      'mutation ($t: String!) { createDocument(input: { organization: "acme", title: $t }) { document { id } userErrors { code } } }';
    let writing = true;
    let sequence = 0;
    /** One writer on A: each title until it is committed (or taken: an earlier try committed). */
    const writer = (async () => {
      while (writing) {
        const title = `${prefix}-${sequence++}`;
        for (let attempt = 0; attempt < 200; attempt++) {
          const outcome = await record(graphqlProbe('write', `${a}/graphql`, mutation, token, { t: title }));
          if (outcome.status === 200 && (!outcome.code || outcome.code === 'TITLE_TAKEN')) break;
          await sleep(50);
        }
        await sleep(25);
      }
    })();
    await sleep(1000);
    await proxy.drop();
    await sleep(seconds * 1000);
    await proxy.restore();
    await sleep(3000);
    writing = false;
    await writer;
    await sleep(3000); // the reader polls every second; give it a few
    const committed = await processes.documentTitles(prefix);
    const titles = received.results
      .map((result) => result.data?.documentChanged?.document?.title as string | undefined)
      .filter((title) => title?.startsWith(prefix));
    const seen = new Set(titles);
    return {
      scenario: 'restart: events across a database restart',
      restartSeconds: seconds,
      committed: committed.length,
      eventsLost: committed.filter((title) => !seen.has(title)).length,
      duplicates: titles.length - seen.size,
      subscriptionEnded: received.completed || received.error !== undefined,
    };
  } finally {
    client.dispose();
    await processes.stop();
    await proxy.close();
  }
}
