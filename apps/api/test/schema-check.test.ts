import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createDatabase, persistedOperations, recordDeprecatedUses, type Database } from '@latchkey/db';
import { onPglite } from '@latchkey/db/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, dataDir, env, requireBuild, run, service, STACK_TRACE, useOperatorCli, workDir } from './support/built-cli.js';
import { copyCheckout, shallowClone, type CheckoutCopy } from './support/checkout-copy.js';

/**
 * Each test here runs the CLI several times in a row, each a Node process of its own (a second or two, more on a
 * loaded machine): their sum, not any one step, needs more than the default per-test time.
 */
const PROCESSES = { timeout: 120_000 };

// `pnpm latchkey schema check` in a checkout of its own (a copy of this one, in a git repository of its own), so a
// test can edit schema/, commit, and clone it shallow. The copy is never built: the check runs from the sources.

const STATUS_SERVICE = '  "Service name."\n  service: String!\n';
const DOCUMENT_BY_FIELD =
  /\n {2}"""\n {2}A document by exactly one of its keys[\s\S]*?documentBy\(lookup: DocumentLookup!\): Document[^\n]*\n/;

/** The check's JSON answer. */
const parsed = (stdout: string) =>
  JSON.parse(stdout) as {
    result: string;
    notes: string[];
    changes: { level: string; coordinate: string | null; safeByUsage: boolean; affected: Record<string, unknown>[] }[];
  };

/** "coordinate level: who" for each change that reaches someone, as a short summary of a JSON answer. */
const reached = (stdout: string) =>
  parsed(stdout)
    .changes.filter((change) => change.affected.length > 0)
    .map(
      (change) =>
        `${change.coordinate} ${change.level}: ${change.affected.map((use) => [use['source'], use['app'] ?? use['client'], use['version'], use['operation']].filter(Boolean).join(' ')).join(', ')}`,
    );

describe('schema check against the repository operations (no database)', () => {
  let copy: CheckoutCopy;
  let first: string;
  beforeAll(() => {
    copy = copyCheckout('schema-check');
    first = copy.git('rev-parse', 'HEAD').trim();
  });
  const reset = () => copy.git('reset', '-q', '--hard', first);

  it(
    'a removed field that a repository operation selects fails it, naming the coordinate and the operation, while the same change breaks codegen and the build',
    PROCESSES,
    async () => {
      reset();
      copy.edit('schema/status.graphql', STATUS_SERVICE, '');
      const checked = await copy.latchkey(['schema', 'check']);
      expect(checked.code, checked.stderr).toBe(1);
      expect(checked.stdout).toContain('schema check: schema/ against HEAD (');
      expect(checked.stdout).toMatch(/BREAKING +Status\.service: Field 'service' was removed from object type 'Status'/);
      expect(checked.stdout).toContain('repository operation Status (packages/client/src/operations/status.graphql)');
      expect(checked.stdout).toContain('exit 1');
      // Nothing was built: the check read the sources. The same edit fails the client's code generation.
      expect(existsSync(path.join(copy.dir, 'apps/api/dist'))).toBe(false);
      const codegenBin = path.join(copy.dir, 'node_modules/@graphql-codegen/cli/esm/bin.js');
      const codegen = await run(codegenBin, ['--config', 'codegen.ts'], { CODEGEN_TARGET: 'client' }, copy.dir);
      expect(codegen.code).not.toBe(0);
      expect(`${codegen.stdout}${codegen.stderr}`).toContain('Cannot query field "service" on type "Status"');
    },
  );

  it(
    "on a clean tree it checks the last commit's change (HEAD^); where HEAD^ is not in the clone it says so and checks every operation against schema/",
    PROCESSES,
    async () => {
      reset();
      copy.edit('schema/status.graphql', STATUS_SERVICE, '');
      copy.git('commit', '-q', '-am', 'remove Status.service');
      const checked = await copy.latchkey(['schema', 'check', '--json']);
      expect(checked.code, checked.stderr).toBe(1);
      expect(reached(checked.stdout)).toEqual(['Status.service breaking: repository DocumentDashboard, repository Status']);

      const shallow = shallowClone(copy, 'schema-check-shallow');
      const alone = await shallow.latchkey(['schema', 'check']);
      expect(alone.code, alone.stderr).toBe(1);
      expect(alone.stdout).toContain('note: HEAD^ is not in this clone (a first commit, or a shallow clone)');
      expect(alone.stdout).toContain('BREAKING   Cannot query field "service" on type "Status".');
      expect(alone.stdout).toContain('repository operation Status');
    },
  );

  it(
    "dangerous changes are reported and fail only with --fail-on-dangerous: an enum value added that an operation selects, an argument's default changed",
    PROCESSES,
    async () => {
      reset();
      copy.edit('schema/documents.graphql', '  PUBLISHED\n  ARCHIVED\n', '  PUBLISHED\n  ARCHIVED\n  IN_REVIEW\n');
      copy.edit('schema/documents.graphql', 'first: Int = 20', 'first: Int = 25');
      const checked = await copy.latchkey(['schema', 'check', '--json']);
      expect(checked.code, checked.stderr).toBe(0);
      expect(parsed(checked.stdout).result).toBe('dangerous');
      const summary = reached(checked.stdout).sort();
      expect(summary).toHaveLength(2);
      expect(summary[0]).toMatch(/^DocumentStatus\.IN_REVIEW dangerous: .*repository Documents/);
      expect(summary[1]).toMatch(/^Query\.documents\.first dangerous: .*repository Documents/);
      const strict = await copy.latchkey(['schema', 'check', '--fail-on-dangerous']);
      expect(strict.code, strict.stderr).toBe(1);
      expect(strict.stdout).toMatch(/DANGEROUS +DocumentStatus\.IN_REVIEW/);
    },
  );

  it('a nullable argument made non-null is breaking for the operations that leave it out', PROCESSES, async () => {
    reset();
    copy.edit('schema/documents.graphql', 'first: Int = 20, after: String)', 'first: Int = 20, after: String!)');
    const checked = await copy.latchkey(['schema', 'check', '--json']);
    expect(checked.code, checked.stderr).toBe(1);
    expect(reached(checked.stdout)).toEqual([expect.stringMatching(/^Query\.documents\.after breaking: repository DocumentDashboard/)]);
  });

  it("a release's printed schema serves as the base: against the committed one, schema/ has no change", PROCESSES, async () => {
    reset();
    const checked = await copy.latchkey(['schema', 'check', '--json', '--base-file', 'packages/client/schema.graphql']);
    expect(checked.code, checked.stderr).toBe(0);
    expect(parsed(checked.stdout)).toMatchObject({ result: 'ok', changes: [] });
  });

  it(
    'bad input is exit 2 naming it: an unknown --base, SDL that does not parse (file:line:col), an unknown --window',
    PROCESSES,
    async () => {
      reset();
      const unknown = await copy.latchkey(['schema', 'check', '--base', 'no-such-branch']);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('--base no-such-branch is not a revision of this clone');
      const option = await copy.latchkey(['schema', 'check', '--base', '--output=/tmp/x']);
      expect(option.code).toBe(2);
      copy.edit('schema/status.graphql', '  service: String!\n', '  service String!\n');
      const unparsable = await copy.latchkey(['schema', 'check']);
      expect(unparsable.code).toBe(2);
      expect(unparsable.stderr).toContain('schema/status.graphql:8:11: Syntax Error: Expected ":", found Name "String".');
      const window = await copy.latchkey(['schema', 'check', '--window', 'soon']);
      expect(window.code).toBe(2);
      for (const answer of [unknown, option, unparsable, window]) expect(answer.stderr).not.toMatch(STACK_TRACE);
    },
  );
});

requireBuild();

describe('schema check against imported app versions and recent APQ registrations (the database)', () => {
  useOperatorCli();
  let copy: CheckoutCopy;
  beforeAll(() => {
    copy = copyCheckout('schema-check-db');
  });
  /** The check in the copy, against the operator CLI's database. */
  const check = (...args: string[]) =>
    copy.latchkey(['schema', 'check', '--json', ...args], { DATABASE_URL: env['DATABASE_URL'], DATA_DIR: dataDir });
  const BY_ID = 'query ById { documentBy(lookup: { id: "00000000-0000-0000-0000-000000000000" }) { title } }';
  const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000);
  /** The operator CLI's database, opened from here while no command holds it. */
  async function withCliDatabase(use: (db: Database) => Promise<unknown>): Promise<void> {
    const handle = await createDatabase({ url: env['DATABASE_URL'], dataDir, poolSize: 2 });
    try {
      await use(handle.db);
    } finally {
      await handle.close();
    }
  }
  /** An APQ registration of `query` whose last use was `days` ago. */
  const registeredDaysAgo = (query: string, days: number) =>
    withCliDatabase((db) =>
      db
        .insert(persistedOperations)
        .values({ hash: createHash('sha256').update(query).digest('hex'), query, source: 'apq', lastUsedAt: daysAgo(days) })
        .onConflictDoUpdate({ target: persistedOperations.hash, set: { lastUsedAt: daysAgo(days) } }),
    );

  it(
    'a field only an imported app version selects fails the check, naming app and version; after `persisted retire` it passes',
    PROCESSES,
    async () => {
      const manifest = path.join(workDir, 'web-1.json');
      writeFileSync(manifest, JSON.stringify({ [`sha256:${createHash('sha256').update(BY_ID).digest('hex')}`]: BY_ID }));
      const imported = await cli('persisted', 'import', manifest, '--app', 'web', '--version', '1.0.0');
      expect(imported.code, imported.stderr).toBe(0);
      copy.git('reset', '-q', '--hard');
      copy.edit('schema/documents.graphql', copy.read('schema/documents.graphql').match(DOCUMENT_BY_FIELD)![0], '\n');

      const broken = await check();
      expect(broken.code, broken.stderr).toBe(1);
      expect(reached(broken.stdout)).toEqual(['Query.documentBy breaking: app web 1.0.0 ById']);

      const retired = await cli('persisted', 'retire', '--app', 'web', '--version', '1.0.0');
      expect(retired.code, retired.stderr).toBe(0);
      const passed = await check();
      expect(passed.code, passed.stderr).toBe(0);
      expect(parsed(passed.stdout).changes).toContainEqual(
        expect.objectContaining({ coordinate: 'Query.documentBy', level: 'safe', safeByUsage: true }),
      );
    },
  );

  it(
    'a field whose only user is an APQ registration last used 40 days ago passes with --window 30d and fails with --window 60d',
    PROCESSES,
    async () => {
      await registeredDaysAgo(BY_ID, 40);
      const month = await check('--window', '30d');
      expect(month.code, month.stderr).toBe(0);
      const twoMonths = await check('--window', '60d');
      expect(twoMonths.code, twoMonths.stderr).toBe(1);
      expect(reached(twoMonths.stdout)).toEqual(['Query.documentBy breaking: apq ById']);
      expect(parsed(twoMonths.stdout).changes.find((change) => change.coordinate === 'Query.documentBy')!.affected[0]).toMatchObject({
        source: 'apq',
        operation: 'ById',
        lastUsedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
    },
  );

  it(
    'schema usage lists a deprecated field with the clients that used it; past the window it is safe to remove, and the check agrees',
    PROCESSES,
    async () => {
      copy.git('reset', '-q', '--hard');
      const field = 'documentBy(lookup: DocumentLookup!): Document';
      copy.edit('schema/documents.graphql', field, `${field} @deprecated(reason: "Use document(id:).")`);
      await registeredDaysAgo(BY_ID, 40);
      await withCliDatabase((db) => recordDeprecatedUses(db, [{ coordinate: 'Query.documentBy', client: 'web', usedAt: daysAgo(40) }]));
      const usage = (window: string) =>
        copy.latchkey(['schema', 'usage', '--json', '--window', window], { DATABASE_URL: env['DATABASE_URL'], DATA_DIR: dataDir });
      const recent = await usage('60d');
      expect(recent.code, recent.stderr).toBe(0);
      const [listed] = (JSON.parse(recent.stdout) as { coordinates: Record<string, unknown>[] }).coordinates;
      expect(listed).toMatchObject({
        coordinate: 'Query.documentBy',
        reason: 'Use document(id:).',
        documents: [{ source: 'apq', operation: 'ById' }],
        clients: [{ client: 'web', withinWindow: true }],
        safeToRemove: false,
      });
      const month = await usage('30d');
      expect((JSON.parse(month.stdout) as { coordinates: Record<string, unknown>[] }).coordinates[0]).toMatchObject({
        documents: [],
        clients: [{ client: 'web', withinWindow: false }],
        safeToRemove: true,
      });
      const text = await copy.latchkey(['schema', 'usage'], { DATABASE_URL: env['DATABASE_URL'], DATA_DIR: dataDir });
      expect(text.stdout).toContain('Query.documentBy (deprecated: Use document(id:).)');
      expect(text.stdout).toContain('nobody used it within 30d: safe to remove');

      // The check agrees: removing it breaks nobody within 30 days, and the client and the registration within 60.
      copy.edit('schema/documents.graphql', copy.read('schema/documents.graphql').match(DOCUMENT_BY_FIELD)![0], '\n');
      expect((await check('--window', '30d')).code).toBe(0);
      const twoMonths = await check('--window', '60d');
      expect(reached(twoMonths.stdout)).toEqual(['Query.documentBy breaking: apq ById, client web']);
    },
  );

  it.runIf(onPglite('the embedded-database tests'))(
    "on the embedded database a running server holds, it says so in one line and checks the repository's operations",
    PROCESSES,
    async () => {
      copy.git('reset', '-q', '--hard');
      copy.edit('schema/status.graphql', STATUS_SERVICE, '');
      const checked = await copy.latchkey(['schema', 'check'], { DATA_DIR: service.config.dataDir });
      expect(checked.code, checked.stderr).toBe(1);
      expect(checked.stdout).toContain(
        "note: the embedded database is held by a running server (stop it, or share PostgreSQL through DATABASE_URL): only the repository's operations are known",
      );
      expect(checked.stdout).toContain('repository operation Status');
    },
  );
});
