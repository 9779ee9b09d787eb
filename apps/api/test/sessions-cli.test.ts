import { existsSync } from 'node:fs';
import { seedDemoData } from '@latchkey/db';
import { onPostgres, seedPgliteDataDir, testTempDir } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, requireBuild, run, STACK_TRACE } from './support/built-cli.js';
import { databaseKind, postGraphQL, startLocalhostService, type TestService } from './support/service.js';
import { signInThroughDemo } from './support/sessions.js';

// `pnpm latchkey sessions list|end`, the built CLI against a running server's database.

requireBuild();

describe('the operator CLI lists and ends sessions', () => {
  const workDir = testTempDir('sessions-cli');

  it('bad input exits 2 with a message and no stack trace, before anything is read or written', async () => {
    const env = { DATA_DIR: `${workDir}/unused`, NODE_ENV: 'test' };
    const commands = [
      ['sessions'],
      ['sessions', 'frobnicate'],
      ['sessions', 'list'],
      ['sessions', 'end'],
      ['sessions', 'end', '--email', 'alice@acme.test', '--id', 'not a session id'],
      ['sessions', 'list', '--email', 'alice@acme.test', '--all'],
    ];
    const results = await Promise.all(commands.map((args) => run(CLI, args, env, workDir)));
    for (const [index, result] of results.entries()) {
      const args = commands[index]!.join(' ');
      expect(result.code, args).toBe(2);
      expect(result.stdout, args).toBe('');
      expect(result.stderr).not.toMatch(STACK_TRACE);
    }
    // Nothing was opened: no embedded database was created in the data directory.
    expect(existsSync(`${workDir}/unused`)).toBe(false);
  });

  it('an unknown e-mail exits 4 (list and end)', async () => {
    const dataDir = `${workDir}/fresh`;
    if (databaseKind === 'pglite') seedPgliteDataDir(dataDir);
    const env = { DATA_DIR: dataDir, NODE_ENV: 'test', DATABASE_URL: undefined as string | undefined };
    if (databaseKind === 'postgres') {
      const { createOwnDatabase } = await import('./support/service.js');
      const own = await createOwnDatabase(process.env['DATABASE_URL']!);
      env.DATABASE_URL = own.url;
      try {
        for (const command of ['list', 'end'])
          expect((await run(CLI, ['sessions', command, '--email', 'nobody@example.test'], env, workDir)).code).toBe(4);
      } finally {
        await own.drop();
      }
      return;
    }
    for (const command of ['list', 'end'])
      expect((await run(CLI, ['sessions', command, '--email', 'nobody@example.test'], env, workDir)).code).toBe(4);
  });

  describe.runIf(onPostgres('the PostgreSQL-only tests'))('beside a running server', () => {
    let service: TestService;
    let base: string;
    let env: Record<string, string | undefined>;

    beforeAll(async () => {
      ({ service, base } = await startLocalhostService({ NODE_ENV: 'development', TRUST_PROXY: 'loopback' }));
      await seedDemoData(service.database);
      const { config } = service;
      env = {
        NODE_ENV: 'development',
        DATA_DIR: `${workDir}/beside`,
        DATABASE_URL: config.database.url,
        SIGNING_KEY: JSON.stringify(service.privateJwk),
        PUBLIC_URL: config.http.publicUrl,
      };
    }, 60_000);
    afterAll(() => service?.stop());

    it('sessions list prints one JSON line per session; sessions end --id ends one (its token refused by the server within 5 s), without --id all; an unknown id exits 4', async () => {
      const one = await signInThroughDemo(base, service.config.dataDir, 'alice@acme.test', {
        forwardedFor: '192.0.2.1',
        userAgent: 'One/1',
      });
      const two = await signInThroughDemo(base, service.config.dataDir, 'alice@acme.test', {
        forwardedFor: '192.0.2.2',
        userAgent: 'Two/1',
      });
      const listed = await run(CLI, ['sessions', 'list', '--email', 'alice@acme.test'], env, workDir);
      expect(listed.code, listed.stderr).toBe(0);
      const lines = listed.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.map((line) => line['id']).sort()).toEqual([one.sessionId, two.sessionId].sort());
      expect(Object.keys(lines[0]!).sort()).toEqual(['address', 'amr', 'client', 'createdAt', 'current', 'id', 'lastUsedAt', 'userAgent']);
      expect(lines.find((line) => line['id'] === one.sessionId)).toMatchObject({
        address: '192.0.2.1',
        userAgent: 'One/1',
        current: false,
      });

      expect((await run(CLI, ['sessions', 'end', '--email', 'alice@acme.test', '--id=AAAAAAAAAAAAAAAAAAAAA'], env, workDir)).code).toBe(4);
      // An id may begin with '-' (a nanoid): the word after --id is its value, not a missing one (4, not 2).
      expect((await run(CLI, ['sessions', 'end', '--email', 'alice@acme.test', '--id', '-AAAAAAAAAAAAAAAAAAAA'], env, workDir)).code).toBe(
        4,
      );
      const endOne = await run(CLI, ['sessions', 'end', '--email', 'alice@acme.test', '--id', one.sessionId], env, workDir);
      expect(endOne.code, endOne.stderr).toBe(0);
      expect(JSON.parse(endOne.stdout)).toEqual({ ended: 1 });
      const viewer = (token: string) => postGraphQL(`${base}/graphql`, { query: '{ viewer { subject } }' }, { token });
      await expect.poll(async () => (await viewer(one.accessToken)).status, { timeout: 5000, interval: 100 }).toBe(401);
      expect((await viewer(two.accessToken)).status).toBe(200);

      const endAll = await run(CLI, ['sessions', 'end', '--email', 'alice@acme.test'], env, workDir);
      expect(JSON.parse(endAll.stdout)).toEqual({ ended: 1 });
      await expect.poll(async () => (await viewer(two.accessToken)).status, { timeout: 5000, interval: 100 }).toBe(401);
      expect((await run(CLI, ['sessions', 'list', '--email', 'alice@acme.test'], env, workDir)).stdout).toBe('');
    }, 90_000); // two sign-ins and six CLI processes, each opening the database (a few seconds each on a busy machine)
  });
});
