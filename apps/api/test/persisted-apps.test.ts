import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { onPostgres } from '@latchkey/db/testing';
import { RECHECK_SECONDS } from '@latchkey/persisted';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cli, requireBuild, run, STACK_TRACE, useOperatorCli, workDir } from './support/built-cli.js';
import { startServiceProcesses, type ServiceProcesses } from './support/processes.js';
import { postGraphQL } from './support/service.js';

/**
 * Each test here runs the CLI several times in a row, each a Node process of its own (a second or two, more on a
 * loaded machine): their sum, not any one step, needs more than the default per-test time.
 */
const PROCESSES = { timeout: 120_000 };

/** A manifest as the client preset writes it: `sha256:<hex>` of each document's text. */
function manifestOf(...queries: string[]): Record<string, string> {
  return Object.fromEntries(queries.map((query) => [`sha256:${createHash('sha256').update(query).digest('hex')}`, query]));
}

function writeManifest(dir: string, name: string, manifest: Record<string, string>): string {
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(manifest));
  return file;
}

const STATUS = 'query AppStatus { status { service } }';
const VERSION = 'query AppVersion { status { version } }';
const BOTH = 'query AppBoth { status { service version } }';

requireBuild();

describe('persisted import --app --version, persisted apps, persisted retire (the operator CLI)', () => {
  useOperatorCli();
  // The CLI's own database (on PGlite a directory of its own, not the test service's).
  const hashes = async () => {
    const counted = await cli('persisted', 'count');
    expect(counted.code, counted.stderr).toBe(0);
    return (JSON.parse(counted.stdout) as { allowlist: number }).allowlist;
  };
  const apps = async () => {
    const listed = await cli('persisted', 'apps');
    expect(listed.code, listed.stderr).toBe(0);
    return listed.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  };

  it(
    'records which app and version each document belongs to; a shared document is stored once; `persisted apps` lists each version',
    PROCESSES,
    async () => {
      const v1 = writeManifest(workDir, 'web-1', manifestOf(STATUS, VERSION));
      const v2 = writeManifest(workDir, 'web-2', manifestOf(VERSION, BOTH));
      const first = await cli('persisted', 'import', v1, '--app', 'web', '--version', '1.0.0');
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toContain('web 1.0.0: 2 documents, 2 added to the allowlist, 0 already there');
      const second = await cli('persisted', 'import', v2, '--app', 'web', '--version', '1.1.0');
      expect(second.stderr).toContain('web 1.1.0: 2 documents, 1 added to the allowlist, 1 already there');
      expect(await hashes()).toBe(3);

      const again = await cli('persisted', 'import', v1, '--app', 'web', '--version', '1.0.0');
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain('0 added to the allowlist, 2 already there');

      const listed = await apps();
      expect(listed.map(({ app, version, status, documents, lastUsedAt }) => ({ app, version, status, documents, lastUsedAt }))).toEqual([
        { app: 'web', version: '1.0.0', status: 'active', documents: 2, lastUsedAt: null },
        { app: 'web', version: '1.1.0', status: 'active', documents: 2, lastUsedAt: null },
      ]);
      expect(Number.isNaN(Date.parse(String(listed[0]!['importedAt'])))).toBe(false);
    },
  );

  it('an import whose app version exists with other documents is refused: exit 3, nothing imported', PROCESSES, async () => {
    const before = { hashes: await hashes(), apps: await apps() };
    const other = writeManifest(workDir, 'web-1-other', manifestOf(STATUS, 'query Extra { status { time } }'));
    const refused = await cli('persisted', 'import', other, '--app', 'web', '--version', '1.0.0');
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('web 1.0.0 is already imported with other documents');
    expect(refused.stderr).not.toMatch(STACK_TRACE);
    expect({ hashes: await hashes(), apps: await apps() }).toEqual(before);
  });

  it('retire of an app version that does not exist: exit 4, nothing changed', PROCESSES, async () => {
    const before = { hashes: await hashes(), apps: await apps() };
    for (const [app, version] of [
      ['web', '9.9.9'],
      ['nobody', '1.0.0'],
    ] as const) {
      const refused = await cli('persisted', 'retire', '--app', app, '--version', version);
      expect(refused.code).toBe(4);
      expect(refused.stderr).toContain(`there is no app version ${app} ${version}`);
    }
    expect({ hashes: await hashes(), apps: await apps() }).toEqual(before);
  });

  it(
    'bad input is exit 2 with nothing changed: one of --app and --version, a malformed name, the reserved app name',
    PROCESSES,
    async () => {
      const file = writeManifest(workDir, 'bad', manifestOf(STATUS));
      const before = { hashes: await hashes(), apps: await apps() };
      for (const args of [
        ['import', file, '--app', 'web'],
        ['import', file, '--version', '1.0.0'],
        ['import', file, '--app', 'we b', '--version', '1'],
        ['import', file, '--app', 'web', '--version', '1.0.0\n'],
        ['import', file, '--app', 'x'.repeat(101), '--version', '1'],
        ['import', file, '--app', 'unnamed', '--version', '1'],
        ['retire', '--app', 'web'],
        ['retire'],
      ]) {
        const refused = await cli('persisted', ...args);
        expect(refused.code, args.join(' ')).toBe(2);
        expect(refused.stderr).toMatch(/^latchkey: persisted (import|retire): /);
      }
      expect({ hashes: await hashes(), apps: await apps() }).toEqual(before);
    },
  );

  it(
    'retire takes the version off the allowlist but what another active version holds; it stays listed as retired',
    PROCESSES,
    async () => {
      const retired = await cli('persisted', 'retire', '--app', 'web', '--version', '1.0.0');
      expect(retired.code, retired.stderr).toBe(0);
      expect(JSON.parse(retired.stdout)).toEqual({ removed: 1, kept: 1 });
      expect(retired.stderr).toContain(`refuse the others within ${RECHECK_SECONDS} seconds`);
      expect(await hashes()).toBe(2);
      expect((await apps()).map(({ version, status }) => `${version} ${status}`)).toEqual(['1.0.0 retired', '1.1.0 active']);
      const help = await run(CLI, ['help', 'persisted'], {}, workDir);
      expect(help.stdout).toContain(`within ${RECHECK_SECONDS} seconds`);
    },
  );

  it('an import without --app keeps its meaning: it adds to the allowlist, listed as the app `unnamed`', PROCESSES, async () => {
    const plain = await cli(
      'persisted',
      'import',
      writeManifest(workDir, 'plain', manifestOf('query Plain { status { version service } }')),
    );
    expect(plain.code, plain.stderr).toBe(0);
    expect((await apps()).map(({ app, version }) => `${app} ${version}`)).toContain('unnamed -');
  });
});

describe.runIf(onPostgres('the PostgreSQL-only tests'))('a retired document, on every instance', () => {
  let processes: ServiceProcesses;
  beforeAll(async () => {
    processes = await startServiceProcesses(2, { PERSISTED_MODE: 'allowlist' });
  }, 60_000);
  afterAll(() => processes?.stop());

  // "Within RECHECK_SECONDS" is the store's reading interval, proved with an injected clock on the store itself
  // (packages/persisted persisted-store.test.ts); here each instance's refusal is the event waited for.
  it('answers PERSISTED_QUERY_NOT_FOUND on both instances after its only app version is retired', PROCESSES, async () => {
    const env = { DATABASE_URL: processes.databaseUrl, DATA_DIR: processes.dataDir, PUBLIC_URL: processes.publicUrl };
    const manifest = manifestOf(STATUS);
    const file = writeManifest(processes.dataDir, 'instances', manifest);
    const imported = await run(CLI, ['persisted', 'import', file, '--app', 'web', '--version', '2.0.0'], env, processes.dataDir);
    expect(imported.code, imported.stderr).toBe(0);
    const [documentId] = Object.keys(manifest);
    const runIt = (url: string) => postGraphQL(`${url}/graphql`, JSON.stringify({ documentId }));
    for (const url of processes.urls) expect((await runIt(url)).json.data).toEqual({ status: { service: 'latchkey' } });

    const retired = await run(CLI, ['persisted', 'retire', '--app', 'web', '--version', '2.0.0'], env, processes.dataDir);
    expect(retired.code, retired.stderr).toBe(0);
    for (const url of processes.urls)
      await expect
        .poll(async () => (await runIt(url)).json.errors?.[0]?.extensions?.code, { timeout: (RECHECK_SECONDS + 20) * 1000, interval: 200 })
        .toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});
