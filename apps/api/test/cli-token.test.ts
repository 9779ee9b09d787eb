import { randomUUID } from 'node:crypto';
import { createDatabase, runMigrations, users } from '@latchkey/db';
import { eq } from 'drizzle-orm';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { CLI, cli, dataDir, env, JWT, requireBuild, run, service, STACK_TRACE, useOperatorCli, workDir } from './support/built-cli.js';
import { COST_REPORTED } from './support/cost.js';
import { postGraphQL } from './support/service.js';

// The operator CLI's `token` command (spec "Access tokens" rules 1-4): what it prints, whom it names, what it refuses.
// The built entry points and how they are run: support/built-cli.ts.

requireBuild();

describe('operator CLI (dist/src/cli.js)', () => {
  useOperatorCli();

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
      expect(claims).toMatchObject({ sub: 'cli-user', amr: ['otp', 'swk'], iss: 'http://localhost:4000', aud: 'http://localhost:4000' });
      expect(claims.exp! - claims.iat!).toBe(300);
    });

    it('rules 1-2: the minted token is accepted by the running service as that user', async () => {
      const { code, stdout, stderr } = await cli('token', '--sub', 'cli-user', '--amr', 'otp,swk', '--ttl', '5m');
      expect(code, stderr).toBe(0);
      const response = await postGraphQL(service.graphqlUrl, { query: '{ viewer { subject amr } }' }, { token: stdout.trim() });
      expect(response.status, response.text).toBe(200);
      expect(response.json).toEqual({ data: { viewer: { subject: 'cli-user', amr: ['otp', 'swk'] } }, extensions: COST_REPORTED });
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

    it('--amr takes only the values the server issues (otp, swk, pwd, hwk, fed, mfa), each once; anything else exits 2', async () => {
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

    it('an unknown option: exit 2 naming it, and where the options are told (not the whole usage)', async () => {
      const result = await cli('token', '--sub', 'x', '--bogus');
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain("Unknown option '--bogus'");
      expect(result.stderr).toContain('pnpm latchkey help token shows its options');
      expect(result.stderr).not.toContain('usage:');
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
});
