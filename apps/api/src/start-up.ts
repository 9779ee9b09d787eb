import { join } from 'node:path';
import { loadKeyMaterial, type KeyMaterial } from '@latchkey/auth/tokens';
import { createDatabase, isEmpty, runMigrations, seedDemoData, type DatabaseHandle } from '@latchkey/db';
import type { Logger } from 'pino';
import type { Config } from './config/load.js';
import { databaseFault, dataDirFault } from './config/start-up-errors.js';
import { bindListeners, type BoundListeners } from './service-listeners.js';

// The first part of start-up, in the order its faults are said (each as the first line of output, docs/operations.md):
// the listen addresses (bound and held, answering "starting"), the keys, then the database: opened, migrated and,
// in development, seeded. It needs none of the application's modules, so `main` runs it before loading them: a
// fault here is said without waiting for the GraphQL stack or the OpenID provider to load (nor printing anything
// of theirs). startService (service.ts) builds the application on what it returns.

/** What the first part of start-up leaves for startService: listeners answering "starting", the keys, the database. */
export interface PreparedStart {
  listeners: BoundListeners;
  keys: KeyMaterial;
  database: DatabaseHandle;
}

/** Keys first: a bad key is a configuration error and must not wait for (or hide behind) the database. */
function loadKeys(config: Config) {
  return loadKeyMaterial({
    signingKey: config.keys.signingKey,
    verifyKeys: config.keys.verifyKeys,
    dataDir: config.dataDir,
    production: config.env === 'production',
  }).catch((error: unknown) => {
    throw dataDirFault(error, config.dataDir);
  });
}

/** A fault of the database's environment (missing, unreachable, in use, a bad URL) is named with its fix. */
const whereIs = (config: Config) => ({ url: config.database.url, dataDir: config.dataDir });

/**
 * The database, said in the log only once its faults are ruled out (a fault's plain message is the first line of
 * output): the embedded one once its directory and lock are held, before its (first time: slow) creation.
 */
function openDatabase(config: Config, logger: Logger): Promise<DatabaseHandle> {
  return createDatabase({
    url: config.database.url,
    dataDir: config.dataDir,
    poolSize: config.database.poolSize,
    timeoutMs: config.database.timeoutMs,
    onOpening: () => logger.info({ database: 'pglite' }, `opening the embedded database in ${join(config.dataDir, 'pglite')}`),
  }).catch((error: unknown) => {
    throw databaseFault(error, whereIs(config));
  });
}

async function prepareDatabase(config: Config, database: DatabaseHandle, logger: Logger): Promise<void> {
  await runMigrations(database).catch((error: unknown) => {
    throw databaseFault(error, whereIs(config));
  });
  // PostgreSQL connects on its first statement (the migrations'): said once it has answered.
  if (database.kind === 'postgres') logger.info({ database: 'postgres' }, 'PostgreSQL (DATABASE_URL) answered');
  // `pnpm start` on a fresh development database comes up with the demo data (docs/endpoints.md).
  if (config.env === 'development' && (await isEmpty(database))) {
    const seeded = await seedDemoData(database);
    logger.info({ ...seeded }, 'seeded demo data into the empty development database');
  }
}

/**
 * Binds the listeners (unless `main` has: `listeners`), loads the keys, opens and prepares the database. Whatever it
 * opened is closed again when a later step fails.
 */
export async function prepareStart(config: Config, logger: Logger, listeners?: BoundListeners): Promise<PreparedStart> {
  const bound = listeners ?? (await bindListeners(config));
  let database: DatabaseHandle | undefined;
  try {
    const keys = await loadKeys(config);
    database = await openDatabase(config, logger);
    await prepareDatabase(config, database, logger);
    return { listeners: bound, keys, database };
  } catch (error) {
    await database?.close();
    await bound.close();
    throw error;
  }
}
