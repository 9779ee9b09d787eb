import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openBackendPids, recreateDatabase } from '@latchkey/db/testing';
/** The database of the latchkey labelled `label` (`''` for the only one; a suffix such as `other` beside it). */
export async function benchDatabase(label) {
    const adminUrl = process.env.DATABASE_URL;
    if (!adminUrl)
        return { kind: 'pglite', env: {}, close: async () => { } };
    const name = `latchkey_bench${label ? `_${label.replace(/[^a-z0-9]+/g, '_')}` : ''}`;
    const url = await recreateDatabase(adminUrl, name);
    const backends = await openBackendPids(adminUrl, name);
    return { kind: 'postgresql', env: { DATABASE_URL: url }, backendPids: backends.read, close: backends.close };
}
/**
 * `pnpm latchkey seed --bench` with this checkout's CLI (the data set is this build's); answers its JSON line. The
 * command refuses production, so it runs in development against the database the production server then opens.
 */
export function seedBenchData(env) {
    const cli = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
    const result = spawnSync(process.execPath, [cli, 'seed', '--bench'], {
        env: { ...process.env, ...env, NODE_ENV: 'development' },
        encoding: 'utf8',
    });
    if (result.status !== 0)
        throw new Error(`latchkey seed --bench failed: ${result.stderr}`);
    return JSON.parse(result.stdout.trim());
}
//# sourceMappingURL=database.js.map