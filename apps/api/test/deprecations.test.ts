import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { createDatabase, listDeprecatedUses, persistedAppVersions } from '@latchkey/db';
import { operationUsage, splitOperations } from '@latchkey/schema-contract';
import { parse } from 'graphql';
import { testTempDir } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COST_REPORTED } from './support/cost.js';
import { multipartParts, ssePayloads } from './support/incremental.js';
import { sample, scrapeMetrics, scrapeMetricsUntil } from './support/metrics.js';
import {
  createOwnDatabase,
  databaseKind,
  getGraphQL,
  postGraphQL,
  rawPost,
  serviceDataDir,
  startTestService,
  type TestService,
} from './support/service.js';
import { overWebSocket, wsClient } from './support/subscriptions.js';
import type { Browser } from 'playwright-core';
import { hasChromium, launchChromium } from './support/chromium.js';
import { startRelyingParty, type RelyingPartyServer } from './support/relying-party.js';
import { buildSchema } from '../src/graphql/schema.js';

const TIME = { coordinate: 'Status.time', reason: 'Use `serverTime`.' };
const OLD_STATUS = 'query OldStatus { status { service time } }';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let service: TestService;
/** a browser app's origin, allowed by CORS_ORIGINS */
let app: RelyingPartyServer;
let cleanUp: () => Promise<void> = async () => undefined;

/**
 * A server whose database holds the apps `ios` and `android` (as `persisted import --app` leaves them, written before it
 * starts: it reads them at start), the allowlisted OldStatus, and metrics on.
 */
beforeAll(async () => {
  const dataDir = serviceDataDir('deprecations');
  const own = databaseKind === 'postgres' ? await createOwnDatabase(process.env['DATABASE_URL']!) : undefined;
  const database = await createDatabase({ url: own?.url, dataDir });
  await database.db.insert(persistedAppVersions).values([
    { app: 'ios', version: '1.0' },
    { app: 'android', version: '2.3' },
  ]);
  await database.close();
  const manifest = join(testTempDir('deprecations-manifest'), 'manifest.json');
  writeFileSync(manifest, JSON.stringify({ [`sha256:${sha256(OLD_STATUS)}`]: OLD_STATUS }));
  app = await startRelyingParty();
  service = await startTestService({
    DATA_DIR: dataDir,
    DATABASE_URL: own?.url,
    METRICS_PORT: '0',
    PERSISTED_ALLOWLIST_FILE: manifest,
    CORS_ORIGINS: app.origin,
  });
  cleanUp = async () => {
    await own?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
});
afterAll(async () => {
  await service?.stop();
  await app?.close();
  await cleanUp();
});

const uses = (text: string, client: string) => sample(text, 'latchkey_deprecated_uses_total', { coordinate: 'Status.time', client });

/** The uses counted for each client while `run` runs (each client's count has moved by the time the scrape returns). */
async function countedDuring(expected: Record<string, number>, run: () => Promise<void>): Promise<string> {
  const before = await scrapeMetrics(service.metricsUrl!);
  await run();
  return scrapeMetricsUntil(
    service.metricsUrl!,
    (text) => Object.entries(expected).every(([client, count]) => uses(text, client) - uses(before, client) === count),
    `the uses ${JSON.stringify(expected)}`,
  );
}

describe('extensions.deprecated: an operation is told which deprecated coordinates it used', () => {
  it('over HTTP: beside its cost; per operation of a batch; absent from an operation that uses none', async () => {
    const answer = await postGraphQL(service.graphqlUrl, { query: '{ status { time } }' });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ data: { status: { time: expect.any(String) } }, extensions: { ...COST_REPORTED, deprecated: [TIME] } });
    const plain = await postGraphQL(service.graphqlUrl, { query: '{ status { serverTime } }' });
    expect(plain.json.extensions).toEqual(COST_REPORTED);

    const batch = await postGraphQL(service.graphqlUrl, [{ query: '{ status { time } }' }, { query: '{ status { version } }' }]);
    expect(batch.json.map((result: { extensions: object }) => 'deprecated' in result.extensions)).toEqual([true, false]);
  });

  it('a publicly cacheable GET carries it (it is the same for every caller), without the caller-specific cost', async () => {
    const answer = await getGraphQL(service.graphqlUrl, { query: '{ status { time } }' });
    expect(answer.headers.get('cache-control')).toMatch(/^public/);
    expect(answer.json.extensions).toEqual({ deprecated: [TIME] });
  });

  it('@defer reports in the first payload; a query over SSE in its one result', async () => {
    const post = async (query: string, accept: string) =>
      (
        await fetch(service.graphqlUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept },
          body: JSON.stringify({ query }),
        })
      ).text();
    const parts = multipartParts(await post('{ status { service ... @defer { time } } }', 'multipart/mixed'));
    expect(parts.length).toBeGreaterThan(1);
    expect(parts[0]).toMatchObject({ hasNext: true, extensions: { deprecated: [TIME] } });
    expect(parts.slice(1).some((part) => part.extensions?.deprecated)).toBe(false);
    const { payloads } = ssePayloads(await post('{ status { time } }', 'text/event-stream'));
    expect(payloads).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ deprecated: [TIME] }) })]);
  });

  it('by persisted id, as text: an APQ hash and an allowlisted documentId are reported and counted', async () => {
    const query = '{ status { version time } }';
    const persistedQuery = { version: 1, sha256Hash: sha256(query) };
    await countedDuring({ unknown: 3 }, async () => {
      expect((await postGraphQL(service.graphqlUrl, { query, extensions: { persistedQuery } })).json.extensions.deprecated).toEqual([TIME]);
      expect((await postGraphQL(service.graphqlUrl, { extensions: { persistedQuery } })).json.extensions.deprecated).toEqual([TIME]);
      const allowlisted = await getGraphQL(service.graphqlUrl, { documentId: `sha256:${sha256(OLD_STATUS)}` });
      expect(allowlisted.json).toMatchObject({ data: { status: { service: 'latchkey' } }, extensions: { deprecated: [TIME] } });
    });
  });

  it("over GraphQL over WebSocket (graphql-ws): in the result, counted under the upgrade request's client-name header", async () => {
    const client = wsClient(service.graphqlUrl, undefined, { headers: { 'graphql-client-name': 'ios' } });
    try {
      await countedDuring({ ios: 2 }, async () => {
        for (const payload of [
          { query: '{ status { time } }' },
          { query: '', extensions: { persistedQuery: { version: 1, sha256Hash: sha256(OLD_STATUS) } } },
        ]) {
          const received = overWebSocket(client, payload);
          await received.ended();
          expect(received.results).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ deprecated: [TIME] }) })]);
        }
      });
    } finally {
      await client.dispose();
    }
  });
});

describe('latchkey_deprecated_uses_total{coordinate, client} and the database record: whose use it was', () => {
  it("the token's client_id, else a client-name header naming an imported app (Hive's or Apollo's), else `unknown`", async () => {
    const token = await service.token('user-1', { clientId: 'partner-portal' });
    const query = { query: '{ status { time } }' };
    const text = await countedDuring({ 'partner-portal': 1, ios: 1, android: 1, unknown: 2 }, async () => {
      await postGraphQL(service.graphqlUrl, query, { token, headers: { 'graphql-client-name': 'ios' } });
      await postGraphQL(service.graphqlUrl, query, { headers: { 'graphql-client-name': 'ios' } });
      await postGraphQL(service.graphqlUrl, query, { headers: { 'apollographql-client-name': 'android' } });
      await postGraphQL(service.graphqlUrl, query, { headers: { 'graphql-client-name': 'web' } }); // never imported
      await postGraphQL(service.graphqlUrl, query);
    });
    expect(uses(text, 'web')).toBe(0);
    // The last use of each pair, kept in the database in the background.
    await expect
      .poll(async () => (await listDeprecatedUses(service.database.db)).map((row) => `${row.coordinate} ${row.client}`).sort(), {
        timeout: 30_000,
      })
      .toEqual(['Status.time android', 'Status.time ios', 'Status.time partner-portal', 'Status.time unknown']);
  });

  it('a client-name header of 10 kB, with control characters or naming no imported app: 200, counted as unknown, no new label, never logged', async () => {
    const long = `ios${'x'.repeat(10_240)}`;
    const names = [long, 'ios\tandroid', 'i\x85o\x9bs', 'unnamed', 'web'];
    const before = await scrapeMetrics(service.metricsUrl!);
    const text = await countedDuring({ unknown: names.length, ios: 0 }, async () => {
      for (const name of names) {
        const answer = await rawPost(service.graphqlUrl, JSON.stringify({ query: '{ status { time } }' }), {
          'content-type': 'application/json',
          'graphql-client-name': name,
        });
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.body).extensions.deprecated).toEqual([TIME]);
      }
    });
    const clients = (metrics: string) =>
      [...metrics.matchAll(/^latchkey_deprecated_uses_total\{.*client="([^"]*)"/gm)].map((match) => match[1]).sort();
    expect(clients(text)).toEqual(clients(before));
    expect(service.logText()).not.toContain('x'.repeat(100));
    expect(service.logText()).not.toContain('\\u009b');
  });
});

describe.runIf(hasChromium)('a browser app on another origin (Chromium)', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());

  it("sends a client-name header through CORS' preflight, reads extensions.deprecated, and its use counts under its app", async () => {
    app.servePage(
      '/deprecated',
      `<!doctype html><title>Deprecated</title><pre id="out"></pre><script type="module">
        const answer = await fetch(${JSON.stringify(service.graphqlUrl)}, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'graphql-client-name': 'android' },
          body: JSON.stringify({ query: '{ status { time } }' }),
        });
        document.getElementById('out').textContent = JSON.stringify((await answer.json()).extensions.deprecated);
      </script>`,
    );
    await countedDuring({ android: 1 }, async () => {
      const page = await browser.newPage();
      await page.goto(`${app.origin}/deprecated`);
      await expect.poll(() => page.locator('#out').textContent(), { timeout: 20_000 }).not.toBe('');
      expect(JSON.parse((await page.locator('#out').textContent())!)).toEqual([TIME]);
      await page.close();
    });
  });
});

describe("packages/client's operations", () => {
  it('use nothing deprecated: the clients built from this repository move first', () => {
    const manifest = createRequire(import.meta.url).resolve('@latchkey/client/persisted-documents.json');
    const schema = buildSchema();
    const deprecatedIn = (text: string) =>
      splitOperations(parse(text)).flatMap((operation) => operationUsage(schema, operation.document, operation.name).deprecated);
    const texts = Object.values(JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, string>);
    expect(texts.length).toBeGreaterThan(0);
    expect(texts.flatMap(deprecatedIn)).toEqual([]);
    expect(deprecatedIn(OLD_STATUS)).toEqual([TIME]); // what it would say
  });
});
