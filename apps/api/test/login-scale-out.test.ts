import { onPostgres } from '@latchkey/db/testing';
import { rmSync } from 'node:fs';
import { seedDemoData } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession, freePort } from './support/browser-session.js';
import { outboxOf, tokenOf } from './support/outbox.js';
import { createOwnDatabase, databaseKind, serviceDataDir, startTestService, type TestService } from './support/service.js';

/** A form post as the service's own pages send it (Origin = PUBLIC_URL's origin). */
const consume = (service: TestService, token: string) =>
  new BrowserSession(service.url).request('/login/ott', {
    form: { token },
    headers: { origin: new URL(service.config.http.publicUrl).origin },
  });

describe('spec One-time token login 6: token storage survives restarts', () => {
  it('a token generated before a restart is consumable after it (same DATA_DIR and database)', async () => {
    const dataDir = serviceDataDir('restart');
    const port = await freePort();
    const env = {
      DATA_DIR: dataDir,
      PORT: String(port),
      PUBLIC_URL: `http://localhost:${port}`,
      DATABASE_URL: undefined as string | undefined,
    };
    let dropDatabase: () => Promise<void> = async () => undefined;
    if (databaseKind === 'postgres') {
      // One database for both lives of the service.
      const own = await createOwnDatabase(process.env['DATABASE_URL']!);
      env.DATABASE_URL = own.url;
      dropDatabase = own.drop;
    }
    try {
      const first = await startTestService(env);
      await seedDemoData(first.database);
      await new BrowserSession(first.url).request('/ott/generate', { json: { username: 'erin@acme.test' } });
      const token = tokenOf(await outboxOf(dataDir).next(0));
      await first.stop();

      const second = await startTestService(env);
      try {
        const consumed = await consume(second, token);
        expect(consumed.status).toBe(303);
        const again = await consume(second, token);
        expect(again.status).toBe(401);
      } finally {
        await second.stop();
      }
    } finally {
      await dropDatabase();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe.runIf(onPostgres('the PostgreSQL-only tests'))('scale-out: two instances on one PostgreSQL behave as one service', () => {
  let one: TestService;
  let two: TestService;
  let dataDir: string;
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    dataDir = serviceDataDir('scale');
    const own = await createOwnDatabase(process.env['DATABASE_URL']!);
    dropDatabase = own.drop;
    const url = new URL(own.url);
    // Both write their outbox into the same directory, so the test can read what either sent.
    one = await startTestService({ DATABASE_URL: url.toString(), DATA_DIR: dataDir });
    two = await startTestService({ DATABASE_URL: url.toString(), DATA_DIR: dataDir });
    await seedDemoData(one.database);
  });
  afterAll(async () => {
    await one?.stop();
    await two?.stop();
    await dropDatabase?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a token generated on one instance is consumed on the other, once', async () => {
    const outbox = outboxOf(dataDir);
    const before = outbox.count();
    await new BrowserSession(one.url).request('/ott/generate', { json: { username: 'alice@acme.test' } });
    const token = tokenOf(await outbox.next(before));
    expect((await consume(two, token)).status).toBe(303);
    expect((await consume(one, token)).status).toBe(401);
  });

  it('rate-limit counts are shared: five generations spread over both instances use up one budget', async () => {
    const ask = (service: TestService) => new BrowserSession(service.url).request('/ott/generate', { json: { username: 'bob@acme.test' } });
    const statuses = [];
    for (const service of [one, two, one, two, one]) statuses.push((await ask(service)).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202]);
    expect((await ask(two)).status).toBe(429);
    expect((await ask(one)).status).toBe(429);
  });
});
