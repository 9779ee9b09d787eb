import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createDatabase, runMigrations, seedDemoData, users } from '@latchkey/db';
import { eq } from 'drizzle-orm';
import { ConfigError, loadConfig, parseDurationSeconds, type Config } from './config.js';
import { generateSigningJwk, KeyMaterialError, loadKeyMaterial } from './keys/key-material.js';
import { mintAccessToken } from './principal/mint-access-token.js';
import { readVersion } from './version.js';

const USAGE = `usage: pnpm latchkey <command> [options]

commands:
  migrate                      apply database migrations (idempotent)
  seed                         apply migrations, then add the demo data (idempotent)
  token --sub SUBJECT | --email EMAIL
        [--amr otp,swk] [--acr VALUE] [--scope "openid profile"] [--ttl 10m]
                               mint an access token with the configured key; prints only the token
  keygen                       print a new private signing key (JWK) for SIGNING_KEY
`;

class UsageError extends Error {}

async function withDatabase<T>(config: Config, run: (db: Awaited<ReturnType<typeof createDatabase>>) => Promise<T>): Promise<T> {
  const database = await createDatabase({ url: config.database.url, dataDir: config.dataDir, poolSize: 2 });
  try {
    return await run(database);
  } finally {
    await database.close();
  }
}

async function token(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      sub: { type: 'string' },
      email: { type: 'string' },
      amr: { type: 'string' },
      acr: { type: 'string' },
      scope: { type: 'string' },
      ttl: { type: 'string' },
    },
    strict: true,
  });
  if (!values.sub === !values.email) throw new UsageError('token: give exactly one of --sub or --email');
  let subject = values.sub;
  if (values.email) {
    const email = values.email.trim().toLowerCase();
    subject = await withDatabase(config, async (database) => {
      await runMigrations(database);
      const [user] = await database.db.select({ id: users.id }).from(users).where(eq(users.email, email)).limit(1);
      if (!user) throw new UsageError(`token: no user with e-mail ${email}`);
      return user.id;
    });
  }
  let ttlSeconds = config.tokens.accessTokenTtlSeconds;
  if (values.ttl) {
    try {
      ttlSeconds = parseDurationSeconds(values.ttl);
    } catch (error) {
      throw new UsageError(`token: --ttl ${(error as Error).message}`);
    }
    if (ttlSeconds <= 0) throw new UsageError('token: --ttl must be positive');
  }
  const keys = await loadKeyMaterial({
    signingKey: config.keys.signingKey,
    verifyKeys: config.keys.verifyKeys,
    dataDir: config.dataDir,
    production: config.env === 'production',
  });
  const jwt = await mintAccessToken(keys.signing, {
    subject: subject!,
    issuer: config.tokens.issuer,
    audience: config.tokens.audience,
    ttlSeconds,
    amr: values.amr ? values.amr.split(',').map((s) => s.trim()).filter(Boolean) : ['otp'],
    ...(values.acr ? { acr: values.acr } : {}),
    ...(values.scope ? { scope: values.scope.split(/\s+/).filter(Boolean) } : {}),
  });
  process.stdout.write(`${jwt}\n`);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') {
    process.stdout.write(USAGE);
    return;
  }
  if (command === 'keygen') {
    process.stdout.write(`${JSON.stringify(await generateSigningJwk())}\n`);
    return;
  }
  if (existsSync('.env')) process.loadEnvFile('.env');
  const config = loadConfig({ env: process.env, readFile: (file) => readFileSync(file, 'utf8'), version: readVersion() });
  switch (command) {
    case 'migrate':
      await withDatabase(config, async (database) => {
        await runMigrations(database);
        process.stderr.write(`migrations applied (${database.kind})\n`);
      });
      return;
    case 'seed':
      await withDatabase(config, async (database) => {
        await runMigrations(database);
        const seeded = await seedDemoData(database);
        process.stderr.write(
          `demo data: ${seeded.organizations} organizations, ${seeded.users} users, ${seeded.documents} documents added (${database.kind})\n`,
        );
      });
      return;
    case 'token':
      return token(config, rest);
    default:
      throw new UsageError(`unknown command "${command}"\n\n${USAGE}`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof ConfigError || error instanceof KeyMaterialError) {
    process.stderr.write(`latchkey: ${error.message}\n`);
    process.exitCode = 2;
    return;
  }
  if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`latchkey: ${error.message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  process.stderr.write(`latchkey: ${(error as Error).message}\n`);
  process.exitCode = 1;
});
