// What `schema check` and `schema usage` know clients use: the repository's operations, and from the database the
// documents of every active app version, the APQ registrations used within the window, and the recorded uses of
// deprecated coordinates. The database is read, never migrated: the check runs before a deploy applies migrations.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { listDeprecatedUses } from '@latchkey/db';
import { listActiveAppDocuments, listRegistrationsUsedSince } from '@latchkey/persisted';
import { operationsOf, SourceError, type KnownOperation, type RecordedUse } from '@latchkey/schema-contract';
import type { Config } from '../config/load.js';
import { withDatabase } from './database-commands.js';
import { repositoryOperations } from './schema-sources.js';

export interface KnownUsage {
  operations: KnownOperation[];
  /** every recorded use of a deprecated coordinate, with its client and last use */
  uses: RecordedUse[];
  /** what could not be read, in one line each */
  notes: string[];
  counts: { repository: number; appVersions: number; appDocuments: number; apq: number };
}

type Handle = Parameters<Parameters<typeof withDatabase>[1]>[0];

/** PostgreSQL's "relation does not exist": a database whose migrations predate the table. */
const isMissingTable = (error: unknown) => (error as { code?: unknown })?.code === '42P01';

/** One stored document's operations; one that does not parse (never imported that way) is noted and skipped. */
function storedOperations(
  query: string,
  hash: string,
  origin: Omit<KnownOperation, 'operation' | 'document'>,
  notes: string[],
): KnownOperation[] {
  try {
    return operationsOf({ name: `sha256:${hash.slice(0, 12)}`, body: query }, origin);
  } catch (error) {
    if (!(error instanceof SourceError)) throw error;
    notes.push(`a stored document does not parse and is left out: ${error.message}`);
    return [];
  }
}

async function readStored(database: Handle, since: Date, usage: KnownUsage): Promise<void> {
  const { notes } = usage;
  const readOrNote = async <T>(what: string, read: () => Promise<T[]>): Promise<T[]> =>
    read().catch((error: unknown) => {
      if (!isMissingTable(error)) throw error;
      notes.push(`the database has no ${what} yet (its migrations predate them)`);
      return [];
    });
  const documents = await readOrNote('app versions', () => listActiveAppDocuments(database.db));
  for (const { app, version, hash, query, lastUsedAt } of documents)
    usage.operations.push(...storedOperations(query, hash, { source: 'app', app, version, lastUsedAt }, notes));
  const registrations = await readOrNote('APQ registrations', () => listRegistrationsUsedSince(database.db, since));
  for (const { hash, query, lastUsedAt } of registrations)
    usage.operations.push(...storedOperations(query, hash, { source: 'apq', lastUsedAt }, notes));
  const uses = await readOrNote('recorded uses of deprecated fields', () => listDeprecatedUses(database.db));
  usage.uses.push(...uses);
  usage.counts.appVersions = new Set(documents.map(({ app, version }) => `${app}\0${version}`)).size;
  usage.counts.appDocuments = documents.length;
  usage.counts.apq = registrations.length;
}

/**
 * The database's part, when there is one to read: PostgreSQL (DATABASE_URL), or the embedded database when it
 * exists and no server holds it. Otherwise a note says why only the repository's operations are known.
 */
async function readDatabase(config: Config, since: Date, usage: KnownUsage): Promise<void> {
  if (!config.database.url && !existsSync(join(config.dataDir, 'pglite'))) {
    usage.notes.push(
      `no database: DATABASE_URL is unset and DATA_DIR has no embedded database; only the repository's operations are known`,
    );
    return;
  }
  try {
    await withDatabase(config, (database) => readStored(database, since, usage));
  } catch (error) {
    if ((error as { code?: unknown })?.code !== 'DATABASE_IN_USE') throw error;
    usage.notes.push(
      "the embedded database is held by a running server (stop it, or share PostgreSQL through DATABASE_URL): only the repository's operations are known",
    );
  }
}

/** Everything known to be used, from the checkout at `root` and the configured database. */
export async function knownUsage(config: Config, root: string, since: Date): Promise<KnownUsage> {
  const repository = repositoryOperations(root);
  const usage: KnownUsage = {
    operations: [...repository],
    uses: [],
    notes: [],
    counts: { repository: repository.length, appVersions: 0, appDocuments: 0, apq: 0 },
  };
  await readDatabase(config, since, usage);
  return usage;
}
