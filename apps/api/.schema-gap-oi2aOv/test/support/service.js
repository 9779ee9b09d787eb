import { readFileSync, rmSync } from 'node:fs';
import { createOwnDatabase, seedPgliteDataDir, testTempDir } from '@latchkey/db/testing';
import { freePort } from './browser-session.js';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config.js';
import { generateSigningJwk, parseSigningKey, mintAccessToken } from '@latchkey/auth/tokens';
import { createLogger } from '../../src/logger.js';
import { startService } from '../../src/service.js';
/** Which database the suite runs on: PostgreSQL when DATABASE_URL is set (CI), else embedded PGlite. */
export const databaseKind = process.env['DATABASE_URL'] ? 'postgres' : 'pglite';
let announced = false;
/**
 * Starts the real service on 127.0.0.1 with an ephemeral port, a fresh DATA_DIR, and a generated key.
 * `env` overrides configuration exactly as environment variables would.
 */
export async function startTestService(env = {}, options = {}) {
    if (!announced) {
        announced = true;
        process.stdout.write(`[latchkey tests] database: ${databaseKind}\n`);
    }
    const dataDir = testTempDir();
    // Test files run in parallel and some reseed (truncate) the domain tables: on PostgreSQL each service
    // gets a database of its own, as each gets its own PGlite directory without DATABASE_URL. Both start as a
    // copy of the run's migrated template.
    const ownDatabase = !('DATABASE_URL' in env) && process.env['DATABASE_URL'] ? await createOwnDatabase(process.env['DATABASE_URL']) : undefined;
    if (!('DATABASE_URL' in env) && !process.env['DATABASE_URL'])
        seedPgliteDataDir(dataDir);
    const privateJwk = await generateSigningJwk();
    const config = loadConfig({
        env: {
            NODE_ENV: 'test',
            PORT: '0',
            HOST: '127.0.0.1',
            PUBLIC_URL: 'http://localhost:4000',
            DATA_DIR: dataDir,
            DATABASE_URL: ownDatabase?.url ?? process.env['DATABASE_URL'],
            SIGNING_KEY: JSON.stringify(privateJwk),
            LOG_LEVEL: 'info',
            ...env,
        },
        readFile: (file) => readFileSync(file, 'utf8'),
        version: '0.1.0-test',
    });
    const logs = [];
    let text = '';
    const sink = new Writable({
        write(chunk, _encoding, done) {
            const lines = chunk.toString('utf8');
            text += lines;
            for (const line of lines.split('\n').filter(Boolean))
                logs.push(JSON.parse(line));
            done();
        },
    });
    const service = await startService(config, createLogger(config.logLevel, { destination: sink }));
    const signingKey = await parseSigningKey(JSON.stringify(privateJwk));
    return {
        ...service,
        config,
        privateJwk,
        signingKey,
        logs,
        logText: () => text,
        graphqlUrl: `${service.url}/graphql`,
        token: (subject = 'user-1', input = {}) => mintAccessToken(signingKey, {
            subject,
            issuer: config.tokens.issuer,
            audience: config.tokens.audience,
            ttlSeconds: 600,
            amr: ['otp'],
            ...input,
        }),
        async stop() {
            await service.close();
            rmSync(dataDir, { recursive: true, force: true });
            await ownDatabase?.drop();
            // Acceptance rule: no request in the suite gets a 5xx, except readiness while the database is down and, in
            // tests that take the database away, the honest 503 of an outage.
            const serverErrors = logs.filter((line) => line['msg'] === 'request' &&
                Number(line['status']) >= 500 &&
                line['path'] !== '/readyz' &&
                !(options.outages && Number(line['status']) === 503));
            if (serverErrors.length > 0) {
                throw new Error(`the server answered 5xx: ${JSON.stringify(serverErrors.slice(0, 5))}`);
            }
        },
    };
}
export { createOwnDatabase };
/** POST /graphql as a client would: JSON body, chosen Accept, optional bearer token. */
export async function postGraphQL(url, body, options = {}) {
    const response = await fetch(url, {
        method: 'POST',
        headers: {
            'content-type': 'application/json',
            accept: options.accept ?? 'application/graphql-response+json',
            ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
            ...options.headers,
        },
        body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return readResponse(response);
}
export async function getGraphQL(url, params, options = {}) {
    const query = new URLSearchParams(params).toString();
    const response = await fetch(`${url}?${query}`, {
        headers: {
            accept: options.accept ?? 'application/graphql-response+json',
            ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
            ...options.headers,
        },
    });
    return readResponse(response);
}
/** Status, headers, raw text and (when it is JSON) the parsed body. */
async function readResponse(response) {
    const text = await response.text();
    let json;
    try {
        json = JSON.parse(text);
    }
    catch {
        json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
}
/**
 * A test service whose PUBLIC_URL is the address it listens on, named `localhost` (cookies, redirects and
 * the WebAuthn RP ID need a host name; the server itself listens on 127.0.0.1). Returns it and that base URL.
 */
export async function startLocalhostService(env = {}) {
    const port = await freePort();
    const base = `http://localhost:${port}`;
    return { service: await startTestService({ PORT: String(port), PUBLIC_URL: base, ...env }), base };
}
//# sourceMappingURL=service.js.map