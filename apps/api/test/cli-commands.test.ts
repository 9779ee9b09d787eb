import { onPostgres, onPglite } from '@latchkey/db/testing';
import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDevOutbox } from '@latchkey/auth';
import { parseSigningKey } from '@latchkey/auth/tokens';
import { users } from '@latchkey/db';
import { eq } from 'drizzle-orm';
import { calculateJwkThumbprint, decodeJwt, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { CLI, cli, dataDir, env, JWT, requireBuild, run, service, STACK_TRACE, useOperatorCli, workDir } from './support/built-cli.js';
import { COST_REPORTED } from './support/cost.js';
import { postGraphQL } from './support/service.js';
import { overSse, sseClient } from './support/subscriptions.js';

// The operator CLI's other commands: migrate, seed, documents and delete-document, plan, outbox, keygen, and what it
// refuses.
// The built entry points and how they are run: support/built-cli.ts.

requireBuild();

describe('operator CLI (dist/src/cli.js)', () => {
  useOperatorCli();

  it.runIf(onPglite('the test of the embedded database'))(
    'the embedded database a running server has open is refused (exit 1, DATABASE_IN_USE named), and the server keeps serving',
    async () => {
      const result = await run(CLI, ['documents', '--as', 'alice@acme.test'], { ...env, DATA_DIR: service.config.dataDir }, workDir);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(`the embedded database in ${service.config.dataDir} is open in process ${process.pid}`);
      expect(result.stderr).not.toMatch(STACK_TRACE);
      const response = await postGraphQL(service.graphqlUrl, { query: '{ viewer { subject } }' }, { token: await service.token('u') });
      expect(response.json).toEqual({ data: { viewer: { subject: 'u' } }, extensions: COST_REPORTED });
    },
  );

  it('migrate: exit 0 (and again: idempotent)', async () => {
    for (let i = 0; i < 2; i++) {
      const result = await cli('migrate');
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/migrations applied/);
    }
  }, 90_000); // two CLI processes, each opening the database (PGlite: up to 15 s each on a busy machine)

  it('seed: adds the demo data (docs/endpoints.md) once (idempotent); token --email then works for a seeded user', async () => {
    const first = await cli('seed');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe('');
    expect(first.stderr).toMatch(/demo data: \d+ organizations, \d+ users, \d+ documents added/);
    const second = await cli('seed');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/demo data: 0 organizations, 0 users, 0 documents added/);
    const token = await cli('token', '--email', 'alice@acme.test');
    expect(token.code, token.stderr).toBe(0);
    expect(decodeJwt(token.stdout.trim()).sub).toMatch(/^[0-9a-f-]{36}$/);
  }, 90_000); // three CLI processes, each opening the database (PGlite: up to 15 s each on a busy machine)

  it('documents and delete-document go through the same services and policies as GraphQL and REST', async () => {
    expect((await cli('seed')).code).toBe(0);
    const list = async (email: string) => {
      const result = await cli('documents', '--as', email, '--first', '100');
      expect(result.code, result.stderr).toBe(0);
      const lines = result.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.at(-1)).toMatchObject({ pageInfo: { hasNextPage: false } });
      return lines.slice(0, -1) as { id: string; title: string }[];
    };
    const everything = await list('root@latchkey.test');
    const idOf = (title: string) => everything.find((doc) => doc.title === title)!.id;
    // Authorization 15 and 11: the VIEWER sees only published, past-embargo documents of acme.
    expect((await list('bob@acme.test')).map((doc) => doc.title).sort()).toEqual(['Litigation memo', 'Quarterly plan']);

    // Authorization 8: legal hold binds the super-admin too -> refused (exit 3), nothing deleted.
    const held = await cli('delete-document', idOf('Litigation memo'), '--as', 'root@latchkey.test');
    expect(held.code).toBe(3);
    expect(held.stderr).toMatch(/not allowed/);
    expect(held.stderr).not.toMatch(/Policy|STACK/);
    // Authorization 6: another tenant's document is missing to carol (exit 4), like a random id.
    const foreign = await cli('delete-document', idOf('Quarterly plan'), '--as', 'carol@globex.test');
    const missing = await cli('delete-document', randomUUID(), '--as', 'carol@globex.test');
    expect([foreign.code, foreign.stderr]).toEqual([4, missing.stderr]);
    expect(missing.code).toBe(4);
    // Bad input: exit 2.
    expect((await cli('delete-document', 'not-a-uuid', '--as', 'alice@acme.test')).code).toBe(2);
    // An EDITOR may delete their own document.
    const own = await cli('delete-document', idOf('Old pricing'), '--as', 'erin@acme.test');
    expect(own.code, own.stderr).toBe(0);
    expect((await list('root@latchkey.test')).map((doc) => doc.title)).not.toContain('Old pricing');
    expect((await list('root@latchkey.test')).map((doc) => doc.title)).toContain('Litigation memo');
  }, 120_000); // eleven CLI processes, each opening the database (PGlite: a few seconds each on a busy machine)

  // The CLI and the server share a database only on PostgreSQL (a PGlite directory belongs to one process).
  it.runIf(onPostgres('the PostgreSQL-only tests'))(
    'a change made through the CLI reaches the subscribers of a running server, through the outbox, even when the CLI cannot wake it',
    async () => {
      expect((await cli('seed')).code).toBe(0);
      const [alice] = await service.database.db.select({ id: users.id }).from(users).where(eq(users.email, 'alice@acme.test'));
      const [erin] = await service.database.db.select({ id: users.id }).from(users).where(eq(users.email, 'erin@acme.test'));
      const create = async (title: string) =>
        (
          await postGraphQL(
            service.graphqlUrl,
            { query: `mutation { createDocument(input: { organization: "acme", title: "${title}" }) { document { id } } }` },
            { token: await service.token(erin!.id) },
          )
        ).json.data.createDocument.document.id as string;
      // Subscribed before the documents exist: their creation is delivered first, so what follows is exactly known
      // (a subscription opened just after a change may or may not still receive it).
      const before = service.subscriptions.size();
      const received = overSse(sseClient(service.graphqlUrl, await service.token(alice!.id)), {
        query: 'subscription { documentChanged(organization: "acme") { kind documentId document { title } } }',
      });
      await expect.poll(() => service.subscriptions.size(), { timeout: 30_000, interval: 10 }).toBeGreaterThan(before);
      const titles = ['Deleted from the CLI', 'Deleted from the CLI, nobody woken'];
      const [woken, polled] = [await create(titles[0]!), await create(titles[1]!)];
      await received.waitFor(2);
      const deleted = await cli('delete-document', woken, '--as', 'erin@acme.test');
      expect(deleted.code, deleted.stderr).toBe(0);
      await received.waitFor(3);
      // A Redis that cannot be reached only costs the wake-up: the change is made, and the server reads it by its poll.
      const unwoken = await run(
        CLI,
        ['delete-document', polled, '--as', 'erin@acme.test'],
        { ...env, REDIS_URL: 'redis://127.0.0.1:1' },
        workDir,
      );
      expect(unwoken.code, unwoken.stderr).toBe(0);
      expect(unwoken.stderr).toMatch(/running servers will not be woken .*within a second/);
      await received.waitFor(4);
      expect(received.results).toEqual([
        // A subscription reports its cost in its first payload only.
        ...[woken, polled].map((id, i) => ({
          data: { documentChanged: { kind: 'CREATED', documentId: id, document: { title: titles[i] } } },
          ...(i === 0 ? { extensions: COST_REPORTED } : {}),
        })),
        ...[woken, polled].map((id) => ({ data: { documentChanged: { kind: 'DELETED', documentId: id, document: null } } })),
      ]);
      received.dispose();
    },
    // Three CLI processes (seed and two deletes), each opening the database: 30 s was not enough once under Node 24
    // on a busy machine, where `migrate` alone took 25 s.
    120_000,
  );

  it("plan: sets an organization's plan and says what changed, or that it already was; an unknown organization exits 4", async () => {
    expect((await cli('seed')).code).toBe(0);
    const expectSaid = async (plan: string, said: string) => {
      const result = await cli('plan', '--organization', 'globex', plan);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(said);
    };
    await expectSaid('PRO', 'globex: FREE -> PRO\n');
    await expectSaid('PRO', 'globex: already PRO (unchanged)\n');
    await expectSaid('FREE', 'globex: PRO -> FREE\n');
    const unknown = await cli('plan', '--organization', 'initech', 'PRO');
    expect(unknown.code).toBe(4);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe('latchkey: plan: no organization "initech"\n');
  }, 120_000); // five CLI processes, each opening the database (PGlite: up to 15 s each on a busy machine)

  it('plan: a missing --organization, a malformed slug, a plan that is not FREE or PRO are refused (exit 2) before the database is opened', async () => {
    const unused = path.join(workDir, 'unused');
    const hint = '  pnpm latchkey help plan shows its options';
    const cases: [string[], string][] = [
      [['plan', 'PRO'], 'latchkey: plan: --organization SLUG is required'],
      [['plan', '--organization', 'globex'], 'latchkey: plan: give exactly one plan, FREE or PRO'],
      [['plan', '--organization', 'globex', 'PRO', 'FREE'], 'latchkey: plan: give exactly one plan, FREE or PRO'],
      [['plan', '--organization', 'globex', 'GOLD'], 'latchkey: plan: "GOLD" is not a plan (FREE or PRO)'],
      [['plan', '--organization', 'globex', 'pro'], 'latchkey: plan: "pro" is not a plan (FREE or PRO). Did you mean "PRO"?'],
      [
        ['plan', '--organization', 'Globex Inc', 'PRO'],
        'latchkey: plan: --organization "Globex Inc" is not a slug (1-63 lower-case letters, digits or hyphens)',
      ],
    ];
    // No DATABASE_URL: a command that opened its database would create the embedded one in DATA_DIR.
    const results = await Promise.all(
      cases.map(([args]) => run(CLI, args, { ...env, DATA_DIR: unused, DATABASE_URL: undefined }, workDir)),
    );
    for (const [index, result] of results.entries()) {
      const [args, error] = cases[index]!;
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stdout, args.join(' ')).toBe('');
      expect(result.stderr.split('\n').filter(Boolean), args.join(' ')).toEqual([error, hint]);
    }
    expect(existsSync(unused)).toBe(false);
  });

  it('outbox: prints the latest messages of the development outbox, and says so when it is empty', async () => {
    const empty = await cli('outbox');
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stderr).toContain('the outbox is empty');
    // One message a second: bob's is the latest whatever the machine's speed.
    let sent = Date.now();
    const now = () => new Date((sent += 1000));
    const outbox = createDevOutbox({ dir: path.join(dataDir, 'outbox'), production: false, echo: { write: () => true }, now });
    for (const to of ['alice@acme.test', 'bob@acme.test']) {
      await outbox.deliver(
        { to, token: 't', magicLink: `http://localhost:4000/login/ott?token=for-${to}`, expiresAt: new Date(Date.now() + 300_000) },
        {},
      );
    }
    const latest = await cli('outbox', '--limit', '1');
    expect(latest.code, latest.stderr).toBe(0);
    expect(latest.stdout).toContain('to bob@acme.test');
    expect(latest.stdout).toContain('/login/ott?token=for-bob@acme.test');
    expect(latest.stdout).not.toContain('alice@acme.test');
    expect((await cli('outbox', '--limit', 'many')).code).toBe(2);
  });

  it('keygen: prints one private JWK with kid and alg RS256, usable as SIGNING_KEY', async () => {
    const result = await cli('keygen');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(1);
    const jwk = JSON.parse(result.stdout) as JWK;
    expect(jwk).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    expect(jwk.d).toEqual(expect.any(String));
    expect(jwk.kid).toBe(await calculateJwkThumbprint({ kty: 'RSA', n: jwk.n!, e: jwk.e! }));
    const parsed = await parseSigningKey(result.stdout);
    expect(parsed).toMatchObject({ alg: 'RS256', kid: jwk.kid });
  });

  it('an option a command does not know is refused (exit 2), never ignored', async () => {
    for (const args of [
      ['seed', '--force'],
      ['migrate', '--force'],
      ['keygen', '--rsa'],
      ['token', '--sub', 'x', '--bench'],
    ]) {
      const result = await cli(...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stdout, args.join(' ')).toBe('');
      expect(result.stderr, args.join(' ')).toMatch(/Unknown option '--\w+'/);
      expect(result.stderr).not.toMatch(STACK_TRACE);
    }
  });

  it("`pnpm latchkey` on an up-to-date build prints only the command's own output", async () => {
    const launcher = fileURLToPath(new URL('../../../scripts/latchkey.mjs', import.meta.url));
    const builtAt = statSync(CLI).mtimeMs;
    const result = await run(launcher, ['token', '--sub', 'launcher-user'], env, workDir);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(JWT);
    expect(result.stderr).toBe('');
    expect(statSync(CLI).mtimeMs, 'no build ran').toBe(builtAt);
  });

  it('a mistake is answered with the error, a close command or option where there is one, and where to read more; never the whole usage', async () => {
    const expectAnswer = async (args: string[], lines: string[]) => {
      const result = await cli(...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.split('\n').filter(Boolean)).toEqual(lines);
    };
    await expectAnswer(
      ['documnets', '--as', 'bob@acme.test'],
      ['latchkey: unknown command "documnets". Did you mean "documents"?', '  pnpm latchkey help lists the commands'],
    );
    await expectAnswer(['frobnicate'], ['latchkey: unknown command "frobnicate"', '  pnpm latchkey help lists the commands']);
    await expectAnswer(
      ['documents', '--as', 'bob@acme.test', '--frist', '3'],
      [
        expect.stringMatching(/^latchkey: Unknown option '--frist'/) as unknown as string,
        '  Did you mean --first?',
        '  pnpm latchkey help documents shows its options',
      ],
    );
    await expectAnswer(
      ['token'],
      ['latchkey: token: give exactly one of --sub or --email', '  pnpm latchkey help token shows its options'],
    );
  });

  it("help <command> (and <command> --help) prints that command's entries only", async () => {
    for (const args of [
      ['help', 'sessions'],
      ['sessions', '--help'],
    ]) {
      const result = await cli(...args);
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.stdout).toMatch(/^usage: pnpm latchkey sessions \[options\]\n\n {2}sessions list --email EMAIL/);
      expect(result.stdout).toContain('sessions end --email EMAIL [--id ID]');
      expect(result.stdout).not.toContain('documents --as');
    }
  });
});
