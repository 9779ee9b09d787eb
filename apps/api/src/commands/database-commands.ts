// The commands that open the database (and what they need: the domain, the policies).
// Loaded only when such a command runs, so `keygen` and `token --sub` start without them.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { NO_AUDIT, readOutbox } from '@latchkey/auth';
import { BULK_STATEMENT_TIMEOUT_MS, createDatabase, findAnyUserIdByEmail, runMigrations, seedBenchData, seedDemoData } from '@latchkey/db';
import { AppVersionError } from '@latchkey/persisted';
import { isAuthorizationDenied } from '@latchkey/policy';
import type { Config } from '../config/load.js';
import { openDomainRequest, type DomainRequest } from '../domain/request.js';
import { databaseOf, type RequestScope } from '../domain/request-scope.js';
import { deleteDocument } from '../domain/document-mutations.js';
import { listDocuments } from '../domain/documents.js';
import { InvalidInputError, NotFoundError } from '../domain/errors.js';
import { createLoaderFactory } from '../domain/loaders.js';
import { createSubjectLoader } from '../domain/subject.js';
import { createEventRecorder } from '../events/outbox.js';
import { createMemoryWake, createWakeChannel } from '../events/wake.js';
import { createLogger } from '../logger.js';
import { databaseFault } from '../config/start-up-errors.js';
import { UsageError } from './usage.js';

/** The domain request of an operator acting as a user: the same services and policies as GraphQL and REST. */
async function asUser<T>(
  config: Config,
  email: string | undefined,
  handler: string,
  run: (request: DomainRequest) => Promise<T>,
): Promise<T> {
  if (!email) throw new UsageError(`${handler}: --as EMAIL is required`);
  return withDatabase(config, async (database) => {
    await runMigrations(database);
    const userId = await findAnyUserIdByEmail(database.db, email.trim().toLowerCase());
    if (!userId) throw new UsageError(`${handler}: no user with e-mail ${email}`);
    // The change's event goes to the outbox like any other: running servers read it there (woken by NOTIFY or
    // Redis, else by their poll), and their subscribers hear of it. Waking them only hastens that.
    const wake = await createWakeChannel(config, database, createLogger('silent'), { listen: false }).catch((error: unknown) => {
      process.stderr.write(
        `latchkey: running servers will not be woken (${error instanceof Error ? error.message : String(error)}); they read the change within a second\n`,
      );
      return createMemoryWake();
    });
    try {
      // An operator holds no token, so there is no sign-in to judge: a check that needs a step-up asks for one.
      // The CLI writes no audit events (docs/audit.md): it has no writer of its own.
      const services = {
        subjects: createSubjectLoader(),
        loaders: createLoaderFactory(),
        events: createEventRecorder(wake),
        audit: NO_AUDIT,
      };
      // One command is one request: its statements share one deadline (DATABASE_TIMEOUT), as an HTTP request's do.
      const scope: RequestScope = { requestId: '' };
      const db = databaseOf(scope, database);
      return await run(await openDomainRequest(services, scope, { db, caller: { subject: userId }, handler: `cli ${handler}` }));
    } finally {
      await wake.close();
    }
  });
}

export async function documentsCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      as: { type: 'string' },
      organization: { type: 'string' },
      status: { type: 'string' },
      first: { type: 'string' },
      after: { type: 'string' },
    },
    strict: true,
  });
  if (values.first !== undefined && !/^\d{1,4}$/.test(values.first))
    throw new UsageError('documents: --first must be an integer from 0 to 100');
  const page = await asUser(config, values.as, 'documents', (request) =>
    listDocuments(request, {
      organization: values.organization,
      status: values.status
        ?.split(',')
        .map((status) => status.trim())
        .filter(Boolean),
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

export async function outboxCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { limit: { type: 'string' } }, strict: true });
  if (values.limit !== undefined && !/^\d{1,4}$/.test(values.limit)) throw new UsageError('outbox: --limit must be a whole number');
  const messages = await readOutbox(join(config.dataDir, 'outbox'), values.limit === undefined ? 10 : Number(values.limit));
  if (messages.length === 0) process.stderr.write('the outbox is empty\n');
  for (const message of messages) {
    process.stdout.write(`--- ${message.sentAt} to ${message.to}\nSubject: ${message.subject}\n\n${message.text}\n\n`);
  }
}

export async function deleteDocumentCommand(config: Config, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: { as: { type: 'string' } }, allowPositionals: true, strict: true });
  if (positionals.length !== 1) throw new UsageError('delete-document: give exactly one document id');
  const result = await asUser(config, values.as, 'delete-document', (request) => deleteDocument(request, positionals[0]!, ['id']));
  process.stderr.write(`deleted ${result.deletedDocumentId}\n`);
}

export async function withDatabase<T>(
  config: Config,
  run: (db: Awaited<ReturnType<typeof createDatabase>>) => Promise<T>,
  /** per-statement deadline; bulk work (`seed --bench`) needs longer than a request's DATABASE_TIMEOUT */
  timeoutMs = config.database.timeoutMs,
): Promise<T> {
  // A database that cannot be used (missing, unreachable, in use, a bad URL) is named with its fix, as at start-up.
  const where = { url: config.database.url, dataDir: config.dataDir };
  const database = await createDatabase({ url: config.database.url, dataDir: config.dataDir, poolSize: 2, timeoutMs }).catch(
    (error: unknown) => {
      throw databaseFault(error, where);
    },
  );
  try {
    return await run(database);
  } catch (error) {
    // On PostgreSQL the first statement is the first connection; a command's own mistakes pass unchanged.
    throw config.database.url ? databaseFault(error, where) : error;
  } finally {
    await database.close();
  }
}

export async function migrateCommand(config: Config, args: string[]): Promise<void> {
  parseArgs({ args, options: {}, strict: true });
  await withDatabase(config, async (database) => {
    await runMigrations(database);
    process.stderr.write(`migrations applied (${database.kind})\n`);
  });
}

export async function seedCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { bench: { type: 'boolean', default: false } }, strict: true });
  // Made-up data at volume is for measuring, never for a production database.
  if (values.bench && config.env === 'production') throw new UsageError('seed --bench is refused under NODE_ENV=production');
  await withDatabase(
    config,
    async (database) => {
      await runMigrations(database);
      if (values.bench) {
        // One JSON line of what was added (zeros on a second run): scripts read it.
        process.stdout.write(`${JSON.stringify({ ...(await seedBenchData(database)), database: database.kind })}\n`);
        return;
      }
      const seeded = await seedDemoData(database);
      process.stderr.write(
        `demo data: ${seeded.organizations} organizations, ${seeded.users} users, ${seeded.documents} documents added (${database.kind})\n`,
      );
    },
    values.bench ? Math.max(config.database.timeoutMs, BULK_STATEMENT_TIMEOUT_MS) : undefined,
  );
}

type Database = Parameters<Parameters<typeof withDatabase>[1]>[0];

/** The account with this e-mail address (migrating first); an unknown one exits 4, like any missing thing. */
export async function accountIdOf(database: Database, email: string): Promise<string> {
  await runMigrations(database);
  const userId = await findAnyUserIdByEmail(database.db, email);
  if (!userId) throw new NotFoundError();
  return userId;
}

/** `token --email`: the account's id (migrating first: a fresh data directory has no tables yet). */
export async function userIdByEmail(config: Config, email: string): Promise<string> {
  return withDatabase(config, async (database) => {
    await runMigrations(database);
    const userId = await findAnyUserIdByEmail(database.db, email);
    if (!userId) throw new UsageError(`token: no user with e-mail ${email}`);
    return userId;
  });
}

/**
 * The same answers as the API, as exit codes: refused 3 (an app version imported with other documents, or retired,
 * too), missing or hidden 4, bad input 2; undefined: not one of these.
 */
export function domainExitCode(error: unknown): number | undefined {
  if (isAuthorizationDenied(error)) return 3;
  if (error instanceof NotFoundError) return 4;
  if (error instanceof AppVersionError) return error.code === 'APP_VERSION_UNKNOWN' ? 4 : 3;
  if (error instanceof InvalidInputError) return 2;
  return undefined;
}
