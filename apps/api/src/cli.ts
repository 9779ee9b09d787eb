import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDatabase, runMigrations, seedDemoData, users } from '@latchkey/db';
import { eq } from 'drizzle-orm';
import { ISSUED_AMR_VALUES, readOutbox } from '@latchkey/auth';
import { isAuthorizationDenied } from '@latchkey/policy';
import type { DomainRequest } from './domain/access.js';
import { deleteDocument } from './domain/document-mutations.js';
import { listDocuments } from './domain/documents.js';
import { InvalidInputError, NotFoundError } from './domain/errors.js';
import { createLoaderFactory } from './domain/loaders.js';
import { loadSubject } from './domain/subjects.js';
import { ConfigError, loadConfig, parseDurationSeconds, type Config } from './config.js';
import { generateSigningJwk, KeyMaterialError, loadKeyMaterial } from './keys/key-material.js';
import { mintAccessToken } from './principal/mint-access-token.js';
import { readVersion } from './version.js';
import { createEventRecorder } from './events/outbox.js';
import { createMemoryWake, createWakeChannel } from './events/wake.js';
import { createLogger } from './logger.js';
import { createPersistedStore, ManifestError } from '@latchkey/persisted';
import { importAllowlist } from './graphql/persisted.js';
import { buildSchema } from './graphql/schema.js';

const USAGE = `usage: pnpm latchkey <command> [options]

commands:
  migrate                      apply database migrations (idempotent)
  seed                         apply migrations, then add the demo data (idempotent)
  token --sub SUBJECT | --email EMAIL
        [--amr otp,swk] [--acr VALUE] [--scope "openid profile"] [--ttl 10m]
                               mint an access token with the configured key; prints only the token
  keygen                       print a new private signing key (JWK) for SIGNING_KEY
  outbox [--limit 10]          print the latest messages of the development outbox (DATA_DIR/outbox)
  documents --as EMAIL [--organization SLUG] [--status DRAFT,PUBLISHED] [--first 20] [--after CURSOR]
                               list the documents EMAIL may see (one JSON object per line, then the page info)
  delete-document ID --as EMAIL
                               delete a document as EMAIL would (same rules as the API; legal hold binds everyone)
                               exit 3 when the rules refuse, 4 when the document is missing or hidden
  persisted import FILE        import a persisted-documents manifest (packages/client's, or Apollo's) as the
                               allowlist of trusted documents; every id must be its document's SHA-256 and every
                               document must validate against this schema, or nothing is imported (exit 2)
  persisted count              how many persisted operations the database holds (APQ registrations, allowlist)
`;

class UsageError extends Error {}

/** The domain request of an operator acting as a user: the same services and policies as GraphQL and REST. */
async function asUser<T>(config: Config, email: string | undefined, handler: string, run: (request: DomainRequest) => Promise<T>): Promise<T> {
  if (!email) throw new UsageError(`${handler}: --as EMAIL is required`);
  return withDatabase(config, async (database) => {
    await runMigrations(database);
    const [user] = await database.db.select({ id: users.id }).from(users).where(eq(users.email, email.trim().toLowerCase())).limit(1);
    if (!user) throw new UsageError(`${handler}: no user with e-mail ${email}`);
    // The change's event goes to the outbox like any other: running servers read it there (woken by NOTIFY or
    // Redis, else by their poll), and their subscribers hear of it. Waking them only hastens that.
    const wake = await createWakeChannel(config, database, createLogger('silent'), { listen: false }).catch((error: unknown) => {
      process.stderr.write(`latchkey: running servers will not be woken (${error instanceof Error ? error.message : String(error)}); they read the change within a second\n`);
      return createMemoryWake();
    });
    try {
      const events = createEventRecorder(wake);
      const request: DomainRequest = { db: database.db, subject: await loadSubject(database.db, user.id), loaders: createLoaderFactory()({}, database.db), handler: `cli ${handler}`, events };
      return await run(request);
    } finally {
      await wake.close();
    }
  });
}

async function documentsCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { as: { type: 'string' }, organization: { type: 'string' }, status: { type: 'string' }, first: { type: 'string' }, after: { type: 'string' } },
    strict: true,
  });
  if (values.first !== undefined && !/^\d{1,4}$/.test(values.first)) throw new UsageError('documents: --first must be an integer from 0 to 100');
  const page = await asUser(config, values.as, 'documents', (request) =>
    listDocuments(request, {
      organization: values.organization,
      status: values.status?.split(',').map((status) => status.trim()).filter(Boolean),
      first: values.first === undefined ? undefined : Number(values.first),
      after: values.after,
    }),
  );
  for (const { node } of page.edges) {
    const { id, organizationId, title, status, legalHold, embargoUntil, createdAt } = node;
    process.stdout.write(`${JSON.stringify({ id, organizationId, title, status, legalHold, embargoUntil, createdAt })}\n`);
  }
  process.stdout.write(`${JSON.stringify({ pageInfo: page.pageInfo })}\n`);
}

async function outboxCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { limit: { type: 'string' } }, strict: true });
  if (values.limit !== undefined && !/^\d{1,4}$/.test(values.limit)) throw new UsageError('outbox: --limit must be a whole number');
  const messages = await readOutbox(join(config.dataDir, 'outbox'), values.limit === undefined ? 10 : Number(values.limit));
  if (messages.length === 0) process.stderr.write('the outbox is empty\n');
  for (const message of messages) {
    process.stdout.write(`--- ${message.sentAt} to ${message.to}\nSubject: ${message.subject}\n\n${message.text}\n\n`);
  }
}

async function deleteDocumentCommand(config: Config, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: { as: { type: 'string' } }, allowPositionals: true, strict: true });
  if (positionals.length !== 1) throw new UsageError('delete-document: give exactly one document id');
  const result = await asUser(config, values.as, 'delete-document', (request) => deleteDocument(request, positionals[0]!, ['id']));
  process.stderr.write(`deleted ${result.deletedDocumentId}\n`);
}

async function persistedCommand(config: Config, args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const { positionals } = parseArgs({ args: rest, allowPositionals: true, strict: true });
  await withDatabase(config, async (database) => {
    await runMigrations(database);
    const store = createPersistedStore({ db: database.db, maxRegistrations: config.persisted.maxRegistrations });
    if (action === 'count') {
      process.stdout.write(`${JSON.stringify(await store.count())}\n`);
      return;
    }
    if (action !== 'import') throw new UsageError('persisted: use "persisted import FILE" or "persisted count"');
    if (positionals.length !== 1) throw new UsageError('persisted import: give exactly one manifest file');
    let text: string;
    try {
      text = readFileSync(positionals[0]!, 'utf8');
    } catch {
      throw new UsageError(`persisted import: cannot read ${positionals[0]}`);
    }
    try {
      const { added, unchanged } = await importAllowlist(store, buildSchema(), text, config.limits);
      process.stderr.write(`allowlist: ${added} documents added, ${unchanged} already there (${database.kind})\n`);
    } catch (error) {
      if (error instanceof ManifestError) throw new UsageError(`persisted import: ${error.message}`);
      throw error;
    }
  });
}

async function withDatabase<T>(config: Config, run: (db: Awaited<ReturnType<typeof createDatabase>>) => Promise<T>): Promise<T> {
  const database = await createDatabase({ url: config.database.url, dataDir: config.dataDir, poolSize: 2, timeoutMs: config.database.timeoutMs });
  try {
    return await run(database);
  } finally {
    await database.close();
  }
}

/** `--amr otp,swk`: only values the server issues, each once; an empty one is refused too (every sign-in has a method). */
function amrValues(list: string): string[] {
  const values = list.split(',').map((value) => value.trim());
  const wrong = values.find((value) => !ISSUED_AMR_VALUES.includes(value));
  if (wrong !== undefined) throw new UsageError(`token: --amr ${JSON.stringify(wrong)} is not a method this server issues (${ISSUED_AMR_VALUES.join(', ')})`);
  const twice = values.find((value, index) => values.indexOf(value) !== index);
  if (twice !== undefined) throw new UsageError(`token: --amr names ${twice} twice (each of ${ISSUED_AMR_VALUES.join(', ')} at most once)`);
  return values;
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
  const amr = values.amr === undefined ? ['otp'] : amrValues(values.amr);
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
    amr,
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
    case 'outbox':
      return outboxCommand(config, rest);
    case 'documents':
      return documentsCommand(config, rest);
    case 'delete-document':
      return deleteDocumentCommand(config, rest);
    case 'persisted':
      return persistedCommand(config, rest);
    default:
      throw new UsageError(`unknown command "${command}"\n\n${USAGE}`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // The same answers as the API, as exit codes: refused 3, missing or hidden 4, bad input 2.
  if (isAuthorizationDenied(error)) {
    process.stderr.write(`latchkey: ${error.message}\n`);
    process.exitCode = 3;
    return;
  }
  if (error instanceof NotFoundError) {
    process.stderr.write(`latchkey: ${error.message}\n`);
    process.exitCode = 4;
    return;
  }
  if (error instanceof InvalidInputError) {
    process.stderr.write(`latchkey: ${error.message}\n`);
    process.exitCode = 2;
    return;
  }
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
