// `pnpm latchkey persisted import|apps|retire|count`: the trusted documents of each app version (docs/graphql.md,
// "Apps and their documents"). Loaded only when such a command runs; the database and the schema are loaded once the
// command line has been checked, so a mistyped one is answered at once.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  createPersistedStore,
  listAppVersions,
  ManifestError,
  RECHECK_SECONDS,
  retireAppVersion,
  UNNAMED_APP,
  UNNAMED_VERSION,
  type AppVersion,
} from '@latchkey/persisted';
import type { Config } from '../config/load.js';
import type { Database } from '@latchkey/db';
import { UsageError } from './usage.js';

type Handle = { db: Database; kind: string };

/** Runs `command` on the migrated database (loaded only now: the command line has been checked). */
async function onDatabase<T>(config: Config, command: (database: Handle) => Promise<T>): Promise<T> {
  const [{ runMigrations }, { withDatabase }] = await Promise.all([import('@latchkey/db'), import('./database-commands.js')]);
  return withDatabase(config, async (database) => {
    await runMigrations(database);
    return command(database);
  });
}

/** npm-style names (`web`, `@acme/web-app`) and versions (`1.4.0`, `2026.12.06+a1b2c3`): what a client-name header can carry. */
const APP_NAME = /^[A-Za-z0-9@][A-Za-z0-9._@/+-]{0,99}$/;
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

/** `--app NAME --version VERSION`, both or neither (neither: the app `unnamed`); `unnamed -` only where `allowUnnamed`. */
function appVersionOf(values: { app?: string; version?: string }, command: string, allowUnnamed: boolean): AppVersion | undefined {
  const { app, version } = values;
  if (app === undefined && version === undefined) return undefined;
  if (app === undefined || version === undefined) throw new UsageError(`${command}: give --app NAME and --version VERSION together`);
  if (allowUnnamed && app === UNNAMED_APP && version === UNNAMED_VERSION) return { app, version };
  if (app === UNNAMED_APP)
    throw new UsageError(`${command}: "${UNNAMED_APP}" is the app of imports without --app (its one version is "${UNNAMED_VERSION}")`);
  if (!APP_NAME.test(app))
    throw new UsageError(`${command}: --app must be 1-100 letters, digits and . _ @ / + - (an npm package name fits)`);
  if (!VERSION.test(version)) throw new UsageError(`${command}: --version must be 1-64 letters, digits and . _ + - (a semver fits)`);
  return { app, version };
}

const named = ({ app, version }: AppVersion) => `${app} ${version}`;

async function importManifest(config: Config, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: { app: { type: 'string' }, version: { type: 'string' } },
    allowPositionals: true,
    strict: true,
  });
  const version = appVersionOf(values, 'persisted import', false) ?? { app: UNNAMED_APP, version: UNNAMED_VERSION };
  if (positionals.length !== 1) throw new UsageError('persisted import: give exactly one manifest file');
  let text: string;
  try {
    text = readFileSync(positionals[0]!, 'utf8');
  } catch {
    throw new UsageError(`persisted import: cannot read ${positionals[0]}`);
  }
  const [{ importAllowlist }, { buildSchema }] = await Promise.all([import('../graphql/persisted.js'), import('../graphql/schema.js')]);
  await onDatabase(config, async (database) => {
    const store = createPersistedStore({ db: database.db, maxRegistrations: config.persisted.maxRegistrations });
    try {
      const { added, unchanged } = await importAllowlist(store, buildSchema(), text, config.limits, version);
      process.stderr.write(
        `${named(version)}: ${added + unchanged} documents, ${added} added to the allowlist, ${unchanged} already there (${database.kind})\n`,
      );
    } catch (error) {
      if (error instanceof ManifestError) throw new UsageError(`persisted import: ${error.message}`);
      throw error;
    }
  });
}

async function apps(config: Config, args: string[]): Promise<void> {
  parseArgs({ args, options: {}, strict: true });
  await onDatabase(config, async (database) => {
    for (const { app, version, documents, importedAt, lastUsedAt, retiredAt } of await listAppVersions(database.db))
      process.stdout.write(
        `${JSON.stringify({ app, version, status: retiredAt ? 'retired' : 'active', documents, importedAt, lastUsedAt, retiredAt })}\n`,
      );
  });
}

async function retire(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { app: { type: 'string' }, version: { type: 'string' } }, strict: true });
  const version = appVersionOf(values, 'persisted retire', true);
  if (!version) throw new UsageError('persisted retire: give --app NAME --version VERSION');
  await onDatabase(config, async (database) => {
    const { removed, kept, alreadyRetired } = await retireAppVersion(database.db, version);
    if (alreadyRetired) process.stderr.write(`${named(version)} was already retired: nothing changed\n`);
    else
      process.stderr.write(
        `${named(version)} retired: ${removed.length} documents left the allowlist, ${kept} stay (another active version holds them); ` +
          `running servers refuse the others within ${RECHECK_SECONDS} seconds\n`,
      );
    process.stdout.write(`${JSON.stringify({ removed: removed.length, kept })}\n`);
  });
}

async function count(config: Config, args: string[]): Promise<void> {
  parseArgs({ args, options: {}, strict: true });
  await onDatabase(config, async (database) => {
    const store = createPersistedStore({ db: database.db, maxRegistrations: config.persisted.maxRegistrations });
    process.stdout.write(`${JSON.stringify(await store.count())}\n`);
  });
}

export async function persistedCommand(config: Config, args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'import') return importManifest(config, rest);
  if (action === 'apps') return apps(config, rest);
  if (action === 'retire') return retire(config, rest);
  if (action === 'count') return count(config, rest);
  throw new UsageError(
    'persisted: use "persisted import FILE [--app NAME --version VERSION]", "persisted apps", "persisted retire" or "persisted count"',
  );
}
