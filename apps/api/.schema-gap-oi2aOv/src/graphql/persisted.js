import { checkManifestAgainstSchema, createPersistedStore, ManifestError, parseManifest, } from '@latchkey/persisted';
import { isDatabaseUnavailable } from '@latchkey/db';
import { serviceUnavailable } from './errors.js';
import { queryLimitRules } from './plugins/use-query-limits.js';
/** A store that cannot answer refuses the request before execution (SERVICE_UNAVAILABLE, 503), never a 500. */
function unavailableAsRequestError(pending) {
    return pending.catch((error) => {
        throw isDatabaseUnavailable(error) ? serviceUnavailable() : error;
    });
}
/** The persisted-operation store of this instance, and the registration budget per client address. */
export function createPersistedOperations(config, db, limits, logger) {
    const store = createPersistedStore({
        db,
        cacheSize: config.persisted.cacheSize,
        maxRegistrations: config.persisted.maxRegistrations,
        onBackgroundError: (error) => logger.warn({ err: error }, "refreshing a persisted operation's last use failed"),
    });
    // Counted where the login limits are (Redis, PostgreSQL or memory), so every instance shares the budget.
    const budget = limits.window('pq-register', { points: config.persisted.registrationsPerMinute, durationSeconds: 60, blockSeconds: 0 });
    return {
        store: { ...store, get: (hash, options) => unavailableAsRequestError(store.get(hash, options)) },
        allowRegistration: (ip) => unavailableAsRequestError(budget(ip)),
    };
}
/**
 * Imports a persisted-documents manifest (the client codegen's, or Apollo's) as the allowlist: every id must be
 * the SHA-256 of its document, and every document must validate against this server's schema and its document
 * limits, or nothing is imported (ManifestError naming each problem).
 */
export async function importAllowlist(store, schema, text, limits) {
    const entries = parseManifest(text);
    const problems = checkManifestAgainstSchema(schema, entries, queryLimitRules(limits));
    if (problems.length > 0)
        throw new ManifestError(problems);
    return store.importAllowlist(entries);
}
//# sourceMappingURL=persisted.js.map