import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, statSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { seedPgliteDataDir, testTempDir } from '@latchkey/db/testing';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDevOutbox } from '@latchkey/auth';
import { createDatabase, runMigrations, users } from '@latchkey/db';
import { eq } from 'drizzle-orm';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSigningKey } from '@latchkey/auth/tokens';
import { databaseKind, postGraphQL, startTestService, type TestService } from './support/service.js';
import { overSse, sleep, sseClient } from './support/subscriptions.js';

// The BUILT operator CLI and server entry point, run as child processes (the turbo pipeline builds
// before tests; by hand: `cd apps/api && npx tsc -p tsconfig.build.json`).

const DIST = fileURLToPath(new URL('../dist/src/', import.meta.url));
const CLI = path.join(DIST, 'cli.js');
const MAIN = path.join(DIST, 'main.js');
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const STACK_TRACE = /^\s+at\s/m;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `node <script> ...args` with exactly `env` (plus PATH), in `cwd`, and collects its output. */
function run(script: string, args: string[], env: Record<string, string | undefined>, cwd: string, timeoutMs = 60_000): Promise<Run> {
  const started = Date.now();
  const childEnv = Object.fromEntries(
    Object.entries({ PATH: process.env['PATH'], ...env }).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

beforeAll(() => {
  if (!existsSync(CLI) || !existsSync(MAIN)) {
    throw new Error(`${DIST} is not built: run \`cd apps/api && npx tsc -p tsconfig.build.json\` (turbo's test task does)`);
  }
});

describe('operator CLI (dist/src/cli.js)', () => {
  let service: TestService;
  let workDir: string;
  let dataDir: string;
  let env: Record<string, string | undefined>;

  const cli = (...args: string[]) => run(CLI, args, env, workDir);

  beforeAll(async () => {
    service = await startTestService();
    // A working directory of its own, so a developer's .env is never loaded into the child.
    workDir = testTempDir('cli');
    dataDir = path.join(workDir, 'data');
    if (!service.config.database.url) seedPgliteDataDir(dataDir);
    env = {
      DATA_DIR: dataDir,
      SIGNING_KEY: JSON.stringify(service.privateJwk),
      PUBLIC_URL: 'http://localhost:4000',
      // the service's own database (on PostgreSQL each test service has one)
      DATABASE_URL: service.config.database.url,
    };
    expect(service.config.tokens.issuer).toBe('http://localhost:4000');
  });
  afterAll(async () => {
    await service?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  describe('token', () => {
    it('prints exactly one line, a JWT, and nothing else on stdout', async () => {
      const result = await cli('token', '--sub', 'cli-user', '--amr', 'otp,swk', '--ttl', '5m');
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.endsWith('\n')).toBe(true);
      const lines = result.stdout.split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[1]).toBe('');
      expect(lines[0]).toMatch(JWT);
      expect(result.stderr).toBe('');

      const claims = decodeJwt(lines[0]!);
      expect(decodeProtectedHeader(lines[0]!)).toMatchObject({ alg: 'RS256', kid: service.signingKey.kid, typ: 'at+jwt' });
      expect(claims).toMatchObject({ sub: 'cli-user', amr: ['otp', 'swk'], iss: 'http://localhost:4000', aud: 'urn:latchkey:api' });
      expect(claims.exp! - claims.iat!).toBe(300);
    });

    it('rules 1-2: the minted token is accepted by the running service as that user', async () => {
      const { code, stdout, stderr } = await cli('token', '--sub', 'cli-user', '--amr', 'otp,swk', '--ttl', '5m');
      expect(code, stderr).toBe(0);
      const response = await postGraphQL(service.graphqlUrl, { query: '{ viewer { subject amr } }' }, { token: stdout.trim() });
      expect(response.status, response.text).toBe(200);
      expect(response.json).toEqual({ data: { viewer: { subject: 'cli-user', amr: ['otp', 'swk'] } } });
    });

    it('--email resolves the user id as sub', async () => {
      const email = `cli-${randomUUID()}@example.test`;
      const database = await createDatabase({ url: env['DATABASE_URL'], dataDir, poolSize: 2 });
      let id: string;
      try {
        await runMigrations(database);
        [{ id }] = (await database.db.insert(users).values({ email }).returning({ id: users.id })) as [{ id: string }];
      } finally {
        await database.close(); // PGlite: one process at a time owns the directory
      }
      try {
        const result = await cli('token', '--email', email.toUpperCase());
        expect(result.code, result.stderr).toBe(0);
        expect(decodeJwt(result.stdout.trim()).sub).toBe(id);
      } finally {
        const cleanup = await createDatabase({ url: env['DATABASE_URL'], dataDir, poolSize: 2 });
        await cleanup.db.delete(users).where(eq(users.email, email));
        await cleanup.close();
      }
    });

    it('issue 13 point 6: --amr takes only the values the server issues (otp, swk, pwd, hwk, fed, mfa), each once; anything else exits 2', async () => {
      const all = await cli('token', '--sub', 'cli-user', '--amr', 'otp, swk,pwd,hwk,fed,mfa');
      expect(all.code, all.stderr).toBe(0);
      expect(decodeJwt(all.stdout.trim()).amr).toEqual(['otp', 'swk', 'pwd', 'hwk', 'fed', 'mfa']);
      const wrong = ['otp,face', 'OTP', 'otp,otp', 'pwd,mfa,pwd', ',', 'otp;swk', 'sms'];
      // Refused before the key or the database is touched: the processes may run side by side.
      const answers = await Promise.all(wrong.map((amr) => cli('token', '--sub', 'cli-user', '--amr', amr)));
      for (const [index, refused] of answers.entries()) {
        expect(refused.code, wrong[index]).toBe(2);
        expect(refused.stdout).toBe('');
        expect(refused.stderr).toMatch(/^latchkey: token: --amr /);
        for (const value of ['otp', 'swk', 'pwd', 'hwk', 'fed', 'mfa']) expect(refused.stderr).toContain(value);
        expect(refused.stderr).not.toMatch(STACK_TRACE);
      }
    }, 120_000); // eight CLI processes (a few seconds each on a busy machine)

    it('without --sub or --email: exit 2, usage on stderr, nothing on stdout', async () => {
      const result = await cli('token');
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/--sub/);
      expect(result.stderr).toMatch(/--email/);
    });

    it('with both --sub and --email: exit 2', async () => {
      const result = await cli('token', '--sub', 'x', '--email', 'x@example.test');
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
    });

    it('--email of no user: exit 2 saying there is no such user', async () => {
      const result = await cli('token', '--email', 'nobody@example.test');
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/no user/i);
      expect(result.stderr).toContain('nobody@example.test');
      expect(result.stderr).not.toMatch(STACK_TRACE);
    });

    it('--ttl banana: exit 2 naming --ttl', async () => {
      const result = await cli('token', '--sub', 'x', '--ttl', 'banana');
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('--ttl');
    });

    it('an unknown option: exit 2 with usage', async () => {
      const result = await cli('token', '--sub', 'x', '--bogus');
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('usage:');
    });

    it('rule 4: the key comes from configuration; with SIGNING_KEY not a key, exit 2 without echoing it', async () => {
      const secret = 'this-is-not-a-key-but-looks-secret';
      const result = await run(CLI, ['token', '--sub', 'x'], { ...env, SIGNING_KEY: secret }, workDir);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/signing key/i);
      expect(result.stderr).not.toContain(secret);
    });
  });

  it.runIf(databaseKind === 'pglite')(
    'the embedded database a running server has open is refused (exit 1, DATABASE_IN_USE named), and the server keeps serving',
    async () => {
      const result = await run(CLI, ['documents', '--as', 'alice@acme.test'], { ...env, DATA_DIR: service.config.dataDir }, workDir);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(`the embedded database is open in process ${process.pid}`);
      expect(result.stderr).not.toMatch(STACK_TRACE);
      const response = await postGraphQL(service.graphqlUrl, { query: '{ viewer { subject } }' }, { token: await service.token('u') });
      expect(response.json).toEqual({ data: { viewer: { subject: 'u' } } });
    },
  );

  it('migrate: exit 0 (and again: idempotent)', async () => {
    for (let i = 0; i < 2; i++) {
      const result = await cli('migrate');
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/migrations applied/);
    }
  });

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
  });

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
  it.runIf(databaseKind === 'postgres')(
    'issue 13 point 2: a change made through the CLI reaches the subscribers of a running server, through the outbox, even when the CLI cannot wake it',
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
      for (let i = 0; i < 500 && service.subscriptions.size() <= before; i++) await sleep(10);
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
        ...[woken, polled].map((id, i) => ({
          data: { documentChanged: { kind: 'CREATED', documentId: id, document: { title: titles[i] } } },
        })),
        ...[woken, polled].map((id) => ({ data: { documentChanged: { kind: 'DELETED', documentId: id, document: null } } })),
      ]);
      received.dispose();
    },
  );

  it('outbox: prints the latest messages of the development outbox, and says so when it is empty', async () => {
    const empty = await cli('outbox');
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stderr).toContain('the outbox is empty');
    const outbox = createDevOutbox({ dir: path.join(dataDir, 'outbox'), production: false, echo: { write: () => true } });
    for (const to of ['alice@acme.test', 'bob@acme.test']) {
      await outbox.deliver(
        { to, token: 't', magicLink: `http://localhost:4000/login/ott?token=for-${to}`, expiresAt: new Date(Date.now() + 300_000) },
        {},
      );
      await new Promise((resolve) => setTimeout(resolve, 2));
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

  it('issue 14 point 8: an option a command does not know is refused (exit 2, usage), never ignored', async () => {
    for (const args of [
      ['seed', '--bench'],
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

  it("issue 14 point 8: `pnpm latchkey` on an up-to-date build prints only the command's own output", async () => {
    const launcher = fileURLToPath(new URL('../../../scripts/latchkey.mjs', import.meta.url));
    const builtAt = statSync(CLI).mtimeMs;
    const result = await run(launcher, ['token', '--sub', 'launcher-user'], env, workDir);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(JWT);
    expect(result.stderr).toBe('');
    expect(statSync(CLI).mtimeMs, 'no build ran').toBe(builtAt);
  });

  it('an unknown command: exit 2 with usage on stderr', async () => {
    const result = await cli('frobnicate');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('unknown command "frobnicate"');
    expect(result.stderr).toContain('usage:');
  });
});

describe('server start-up (dist/src/main.js)', () => {
  let workDir: string;
  beforeAll(() => {
    workDir = mkdtempSync(path.join(tmpdir(), 'latchkey-main-'));
  });
  afterAll(() => {
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  const production = { NODE_ENV: 'production', PORT: '0', LOG_LEVEL: 'info' };

  it('rule 4: production without SIGNING_KEY exits 1 quickly with a clear message naming SIGNING_KEY, no stack trace', async () => {
    const result = await run(MAIN, [], { ...production, DATA_DIR: path.join(workDir, 'no-key') }, workDir, 15_000);
    expect(result.code).toBe(1);
    expect(result.ms).toBeLessThan(5_000);
    expect(result.stderr).toContain('SIGNING_KEY');
    expect(result.stderr).toMatch(/^latchkey: /);
    expect(result.stderr).not.toMatch(STACK_TRACE);
    expect(result.stdout).toBe('');
    // and no development key was generated in its place
    expect(existsSync(path.join(workDir, 'no-key', 'keys'))).toBe(false);
  });

  it('rule 4: production with SIGNING_KEY="" (empty) is refused the same way', async () => {
    const result = await run(MAIN, [], { ...production, SIGNING_KEY: '', DATA_DIR: path.join(workDir, 'empty-key') }, workDir, 15_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('SIGNING_KEY');
    expect(result.stderr).not.toMatch(STACK_TRACE);
  });
});
