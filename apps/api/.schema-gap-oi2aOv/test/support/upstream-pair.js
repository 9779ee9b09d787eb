import { linkFederatedIdentity } from '@latchkey/auth';
import { startUpstreamProvider } from '@latchkey/auth/testing';
import { count, federatedIdentities, seedDemoData, users } from '@latchkey/db';
import { expect } from 'vitest';
import { BrowserSession, freePort } from './browser-session.js';
import { demoOf } from './demo.js';
import { startTestService } from './service.js';
/** The upstream accounts of every test: alice's is linked to her; the impostor reports bob's address. */
const UPSTREAM_ACCOUNTS = [
    { sub: 'up-alice', email: 'alice@acme.test' },
    // Another upstream account reporting bob's address: it must never sign bob in.
    { sub: 'up-impostor', email: 'bob@acme.test' },
    { sub: 'up-carol', email: 'carol@upstream.test' },
    { sub: 'up-root', email: 'root@latchkey.test' },
];
/**
 * A Latchkey service with an upstream oidc-provider of its own (UPSTREAM_NAME "Acme SSO"); up-alice and up-root
 * are linked. Each suite gets its own pair: the suites' callbacks count against 127.0.0.1 like one-time tokens.
 */
export async function startPair(env = {}) {
    const port = await freePort();
    const base = `http://localhost:${port}`;
    const upstream = await startUpstreamProvider({ redirectUri: `${base}/login/upstream/callback`, accounts: UPSTREAM_ACCOUNTS });
    const service = await startTestService({
        NODE_ENV: 'development',
        PORT: String(port),
        PUBLIC_URL: base,
        UPSTREAM_ISSUER: upstream.issuer,
        UPSTREAM_CLIENT_ID: upstream.clientId,
        UPSTREAM_CLIENT_SECRET: upstream.clientSecret,
        UPSTREAM_NAME: 'Acme SSO',
        ...env,
    });
    await seedDemoData(service.database);
    const demo = await demoOf(service);
    await linkFederatedIdentity(service.database.db, { issuer: upstream.issuer, subject: 'up-alice', userId: demo.userId.alice });
    await linkFederatedIdentity(service.database.db, { issuer: upstream.issuer, subject: 'up-root', userId: demo.userId.root });
    async function startUpstream(browser) {
        const start = await browser.request('/login/upstream');
        expect(start.status).toBe(303);
        expect(start.location.startsWith(`${upstream.issuer}/`)).toBe(true);
        return start.location;
    }
    async function signInUpstream(browser, sub) {
        const callback = await upstream.authorize(await startUpstream(browser), sub);
        return browser.request(callback);
    }
    return {
        service,
        base,
        upstream,
        demo,
        async stored() {
            const db = service.database.db;
            const [accounts] = await db.select({ n: count() }).from(users);
            const links = await db.select().from(federatedIdentities).orderBy(federatedIdentities.subject);
            return JSON.stringify({ accounts: accounts.n, links });
        },
        startUpstream,
        signInUpstream,
        async forgetFailures() {
            expect((await signInUpstream(new BrowserSession(base), 'up-alice')).location).toBe('/account');
        },
        async stop() {
            await service.stop();
            await upstream.close();
        },
    };
}
//# sourceMappingURL=upstream-pair.js.map