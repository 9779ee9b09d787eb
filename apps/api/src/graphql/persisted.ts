import {
  checkManifestAgainstSchema,
  createPersistedStore,
  ManifestError,
  parseManifest,
  sha256Hex,
  type AppVersion,
  type PersistedOperationStore,
  type RegistrationDecision,
} from '@latchkey/persisted';
import type { SignInLimits } from '@latchkey/auth';
import { isDatabaseUnavailable, type Database } from '@latchkey/db';
import type { GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import type { Config } from '../config/load.js';
import { serviceUnavailable } from './errors.js';
import { queryLimitRules } from './plugins/use-query-limits.js';

/** A store that cannot answer refuses the request before execution (SERVICE_UNAVAILABLE, 503), never a 500. */
function unavailableAsRequestError<T>(pending: Promise<T>): Promise<T> {
  return pending.catch((error: unknown) => {
    throw isDatabaseUnavailable(error) ? serviceUnavailable() : error;
  });
}

/** The persisted-operation store of this instance, and the registration budget per client address. */
export function createPersistedOperations(
  config: Config,
  db: Database,
  limits: SignInLimits,
  logger: Logger,
): {
  store: PersistedOperationStore;
  allowRegistration: (ip: string) => Promise<RegistrationDecision>;
} {
  const store: PersistedOperationStore = createPersistedStore({
    db,
    cacheSize: config.persisted.cacheSize,
    maxRegistrations: config.persisted.maxRegistrations,
    onBackgroundError: (error) =>
      logger.warn({ err: error }, "reading or refreshing a persisted operation's row failed (the operation is served as held)"),
  });
  // Counted where the login limits are (Redis, PostgreSQL or memory), so every instance shares the budget.
  const budget = limits.window('pq-register', { points: config.persisted.registrationsPerMinute, durationSeconds: 60, blockSeconds: 0 });
  return {
    store: { ...store, get: (hash, options) => unavailableAsRequestError(store.get(hash, options)) },
    allowRegistration: (ip) => unavailableAsRequestError(budget(ip)),
  };
}

/**
 * Imports a persisted-documents manifest (the client codegen's, or Apollo's) as an app version's allowlist: every id must be
 * the SHA-256 of its document, and every document must validate against this server's schema and its document
 * limits, or nothing is imported (ManifestError naming each problem).
 */
export async function importAllowlist(
  store: PersistedOperationStore,
  schema: GraphQLSchema,
  text: string,
  limits: Config['limits'],
  /** whose documents they are (default: the app `unnamed`) */
  version?: AppVersion,
): Promise<{ added: number; unchanged: number }> {
  const entries = parseManifest(text);
  const problems = checkManifestAgainstSchema(schema, entries, queryLimitRules(limits));
  if (problems.length > 0) throw new ManifestError(problems);
  return store.importAllowlist(entries, version);
}

/**
 * The operations of packages/client (the demo page's), registered as automatic persisted queries: the demo sends
 * each by hash first, and without this its first visit finds none of them (a PersistedQueryNotFound, HTTP 404 under
 * application/graphql-response+json, in the browser's console for each) before it registers them with their text.
 * Registered under the hash the client sends (the SHA-256 of the operation's text as generated). Development only
 * (`pnpm start`): tests and production see registration as clients make it.
 */
export async function registerDemoOperations(store: PersistedOperationStore): Promise<number> {
  let registered = 0;
  for (const value of Object.values(await import('@latchkey/client'))) {
    if (!(value instanceof String) || typeof (value as { __meta__?: { hash?: unknown } }).__meta__?.hash !== 'string') continue;
    const text = value.toString();
    await store.register(sha256Hex(text), text);
    registered += 1;
  }
  return registered;
}
