import { rmSync } from 'node:fs';
import path from 'node:path';
import { createDatabase, deprecatedUses, listDeprecatedUses, persistedAppVersions } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from './support/built-cli.js';
import { REPOSITORY_ROOT } from './support/checkout-copy.js';
import { createOwnDatabase, databaseKind, postGraphQL, serviceDataDir, startTestService } from './support/service.js';

// The life cycle end to end: a client's real requests select a deprecated field; `pnpm latchkey schema usage` then
// lists it with that client, and once the window has passed without a use, as safe to remove.

interface Listed {
  coordinate: string;
  clients: { client: string; lastUsedAt: string; withinWindow: boolean }[];
  safeToRemove: boolean;
}

describe('schema usage after real requests', () => {
  let dataDir: string;
  let databaseUrl: string | undefined;
  let dropDatabase: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    dataDir = serviceDataDir('schema-usage');
    const own = databaseKind === 'postgres' ? await createOwnDatabase(process.env['DATABASE_URL']!) : undefined;
    databaseUrl = own?.url;
    dropDatabase = async () => own?.drop();
  });
  afterAll(async () => {
    await dropDatabase();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** `pnpm latchkey schema usage --json` in this checkout, against the test's database. */
  async function usageOf(coordinate: string, window = '30d'): Promise<Listed | undefined> {
    const answer = await run(
      path.join(REPOSITORY_ROOT, 'scripts/latchkey.mjs'),
      ['schema', 'usage', '--json', '--window', window],
      { DATABASE_URL: databaseUrl, DATA_DIR: dataDir },
      REPOSITORY_ROOT,
    );
    expect(answer.code, answer.stderr).toBe(0);
    return (JSON.parse(answer.stdout) as { coordinates: Listed[] }).coordinates.find((listed) => listed.coordinate === coordinate);
  }

  // It starts a server and runs the CLI three times, each a Node process of its own: more than the default per-test time.
  it('lists Status.time with the app whose requests used it; 40 days later, with no use since, it is safe to remove', {
    timeout: 120_000,
  }, async () => {
    const setup = await createDatabase({ url: databaseUrl, dataDir });
    await setup.db.insert(persistedAppVersions).values({ app: 'ios', version: '1.0' });
    await setup.close();
    const service = await startTestService({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl });
    try {
      const answer = await postGraphQL(service.graphqlUrl, { query: '{ status { time } }' }, { headers: { 'graphql-client-name': 'ios' } });
      expect(answer.json.extensions.deprecated).toEqual([{ coordinate: 'Status.time', reason: 'Use `serverTime`.' }]);
      // The last use is written in the background, right after the answer.
      await expect
        .poll(async () => (await listDeprecatedUses(service.database.db)).map(({ coordinate, client }) => `${coordinate} ${client}`), {
          timeout: 30_000,
        })
        .toEqual(['Status.time ios']);
    } finally {
      await service.stop(); // the embedded database serves one process at a time: the CLI's turn
    }

    const used = await usageOf('Status.time');
    expect(used).toMatchObject({ clients: [{ client: 'ios', withinWindow: true }], safeToRemove: false });

    const later = await createDatabase({ url: databaseUrl, dataDir });
    await later.db.update(deprecatedUses).set({ lastUsedAt: new Date(Date.now() - 40 * 86_400_000) });
    await later.close();
    expect(await usageOf('Status.time')).toMatchObject({ clients: [{ client: 'ios', withinWindow: false }], safeToRemove: true });
    expect(await usageOf('Status.time', '60d')).toMatchObject({ safeToRemove: false });
  });
});
