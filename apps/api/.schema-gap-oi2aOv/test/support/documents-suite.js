import { documents } from '@latchkey/db';
import { count, sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect } from 'vitest';
import { demoOf, reseed, STEPPED_UP } from './demo.js';
import { postGraphQL, startTestService } from './service.js';
/**
 * The documents API as the bad-input and error-rule suites use it (spec "Errors" 1-5, "Authorization" 6 and 12):
 * one service per test file, seeded with the demo data, and tokens that meet every step-up. The test service's
 * stop() fails the file if any request was answered 5xx, so every case of these suites is also a "never 5xx"
 * check.
 */
export const GQL = 'application/graphql-response+json';
export const JSON_TYPE = 'application/json';
export const MAX_BODY_BYTES = 300_000; // a 100001-character body fits in a GraphQL request; a 400 kB REST body does not
// Live bindings: assigned by useDocumentsService's beforeAll, read by the tests of the file that called it.
export let service;
export let demo;
const tokens = new Map();
/** Starts this file's service (before its tests) and stops it (after them). */
export function useDocumentsService() {
    beforeAll(async () => {
        service = await startTestService({ MAX_BODY_BYTES: String(MAX_BODY_BYTES) });
        await reseed(service.database);
        demo = await demoOf(service);
        // tokens that meet every step-up (spec Multi-factor rules 6): input rules are judged for allowed callers
        for (const persona of ['alice', 'bob', 'carol'])
            tokens.set(persona, await demo.token(persona, STEPPED_UP));
    });
    afterAll(() => service?.stop());
}
export const token = (persona) => tokens.get(persona);
export const docId = (title) => demo.documentId.get(title);
export const b64url = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
export function gql(persona, query, variables, accept = GQL) {
    return postGraphQL(service.graphqlUrl, { query, ...(variables ? { variables } : {}) }, { token: token(persona), accept });
}
/** 1-based line and column of the first occurrence of `needle` in `query` (for exact `locations`). */
export function at(query, needle, occurrence = 0) {
    let index = -1;
    for (let i = 0; i <= occurrence; i++)
        index = query.indexOf(needle, index + 1);
    if (index < 0)
        throw new Error(`"${needle}" not in query`);
    const before = query.slice(0, index).split('\n');
    return { line: before.length, column: before.at(-1).length + 1 };
}
/** What the documents table holds: row count, newest updated_at (PostgreSQL's text, microseconds kept), digest of every row. */
export async function snapshot() {
    const [row] = await service.database.db
        .select({
        rows: count(),
        latestUpdate: sql `max(${documents.updatedAt})::text`,
        digest: sql `md5(coalesce(string_agg(${documents}::text, '|' order by ${documents.id}), ''))`,
    })
        .from(documents);
    return row;
}
/** Runs `body` and asserts that the documents table is exactly as it was before. */
export async function writesNothing(body) {
    const before = await snapshot();
    expect(before.rows).toBe(7);
    await body();
    expect(await snapshot()).toEqual(before);
}
//# sourceMappingURL=documents-suite.js.map