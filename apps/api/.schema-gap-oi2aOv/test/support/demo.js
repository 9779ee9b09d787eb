import { documents, seedDemoData, users } from '@latchkey/db';
import { sql } from 'drizzle-orm';
/** The seeded personas (docs/endpoints.md, "Demo data"), by e-mail. */
export const PERSONAS = {
    alice: 'alice@acme.test', // OWNER of acme (PRO), e-mail verified
    bob: 'bob@acme.test', // VIEWER of acme
    erin: 'erin@acme.test', // EDITOR of acme, e-mail NOT verified
    carol: 'carol@globex.test', // ADMIN of globex (FREE)
    root: 'root@latchkey.test', // platform super-admin, no membership
};
/** Empties every domain table and seeds the demo data again (ids change). */
export async function reseed(database) {
    await database.db.execute(sql `truncate table documents, memberships, organizations, users cascade`);
    await seedDemoData(database);
}
/** Reads the ids of the seeded data (call again after `reseed`). */
export async function demoOf(service) {
    const { db } = service.database;
    const people = await db.select({ id: users.id, email: users.email }).from(users);
    const userId = Object.fromEntries(Object.entries(PERSONAS).map(([persona, email]) => [persona, people.find((row) => row.email === email).id]));
    const documentId = new Map((await db.select({ id: documents.id, title: documents.title }).from(documents)).map((row) => [row.title, row.id]));
    return { userId, documentId, token: (persona, input) => service.token(userId[persona], input) };
}
/** A REST call as a client would make it. */
export async function callRest(service, method, path, options = {}) {
    const response = await fetch(`${service.url}${path}`, {
        method,
        headers: {
            ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
            ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
            ...options.headers,
        },
        body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
    });
    const text = await response.text();
    let json;
    try {
        json = text ? JSON.parse(text) : undefined;
    }
    catch {
        json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
}
/**
 * Claims of a sign-in that meets every step-up of the API (spec Multi-factor rules 6): a phishing-resistant
 * passkey sign-in just now. For suites that test other rules on operations marked `@stepUp`.
 */
export const STEPPED_UP = Object.freeze({ acr: 'urn:latchkey:acr:phr', amr: ['swk'] });
//# sourceMappingURL=demo.js.map