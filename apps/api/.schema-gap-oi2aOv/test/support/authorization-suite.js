import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { documents, memberships } from '@latchkey/db';
import { DENIAL_CHANNEL } from '@latchkey/policy';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { callRest, demoOf, reseed, STEPPED_UP } from './demo.js';
import { postGraphQL, startTestService } from './service.js';
/**
 * The authorization suites (spec "Authentication > Authorization" 1-15, "Events" 2-3, the error vocabulary):
 * one service per test file over real HTTP, the demo data seeded afresh before each test, tokens that meet every
 * step-up, and the operations, seeded titles and calls the suites share. Outcomes are compared on both surfaces:
 * GraphQL `extensions.code` NOT_FOUND / FORBIDDEN / UNAUTHENTICATED <-> REST 404 / 403 / 401
 * (support/authorization-refusals.ts).
 */
// ---------------------------------------------------------------------------------------------------------
// Operations
export const DOCUMENT = `query ($id: ID!) { document(id: $id) { id title status } }`;
export const DOCUMENT_CAN = `query ($id: ID!) { document(id: $id) { id title viewerCan { update publish archive delete setLegalHold } } }`;
export const LIST = `query ($first: Int = 100, $after: String) {
  documents(first: $first, after: $after) { edges { node { id title status organization { slug } } } pageInfo { hasNextPage endCursor } }
}`;
export const CREATE = `mutation ($input: CreateDocumentInput!) {
  createDocument(input: $input) { document { id title status organization { slug } owner { id } } userErrors { field message code } }
}`;
export const UPDATE = `mutation ($input: UpdateDocumentInput!) {
  updateDocument(input: $input) { document { id title body } userErrors { field message code } }
}`;
export const PUBLISH = `mutation ($id: ID!) { publishDocument(id: $id) { document { id status } userErrors { field message code } } }`;
export const ARCHIVE = `mutation ($id: ID!) { archiveDocument(id: $id) { document { id status } userErrors { field message code } } }`;
export const DELETE = `mutation ($id: ID!) { deleteDocument(id: $id) { deletedDocumentId userErrors { field message code } } }`;
export const HOLD = `mutation ($id: ID!, $hold: Boolean!) { setLegalHold(id: $id, legalHold: $hold) { document { id legalHold } userErrors { field message code } } }`;
export const ROLE = `mutation ($input: ChangeMemberRoleInput!) {
  changeMemberRole(input: $input) { membership { role user { id } organization { slug } } userErrors { field message code } }
}`;
// ---------------------------------------------------------------------------------------------------------
// Seed (docs/endpoints.md, "Demo data")
export const QUARTERLY = 'Quarterly plan'; // acme, PUBLISHED, alice
export const ROADMAP = 'Draft roadmap'; // acme, DRAFT, erin
export const LITIGATION = 'Litigation memo'; // acme, PUBLISHED, legal hold, alice
export const LAUNCH = 'Launch announcement'; // acme, PUBLISHED, embargo 2099, alice
export const PRICING = 'Old pricing'; // acme, ARCHIVED, erin
export const HANDBOOK = 'Globex handbook'; // globex, PUBLISHED, carol
export const MERGER = 'Globex merger draft'; // globex, DRAFT, carol
export const ACME_TITLES = [QUARTERLY, ROADMAP, LITIGATION, LAUNCH, PRICING];
export const GLOBEX_TITLES = [HANDBOOK, MERGER];
// Live bindings: assigned by useAuthorizationService's hooks, read by the tests of the file that called it.
export let service;
export let demo;
let tokens;
/** Starts this file's service (before its tests), seeds the demo data before each test, stops it after them. */
export function useAuthorizationService() {
    beforeAll(async () => {
        service = await startTestService();
    });
    afterAll(() => service?.stop());
    beforeEach(async () => {
        await reseed(service.database);
        demo = await demoOf(service);
        const personas = ['alice', 'bob', 'erin', 'carol', 'root'];
        // Tokens that meet every step-up (spec Multi-factor rules 6): these rules hold for them; step-up-*.test.ts prove
        // what a weaker token gets.
        tokens = Object.fromEntries(await Promise.all(personas.map(async (p) => [p, await demo.token(p, STEPPED_UP)])));
    });
}
export const idOf = (title) => {
    const id = demo.documentId.get(title);
    if (!id)
        throw new Error(`no seeded document "${title}"`);
    return id;
};
export const gql = (who, query, variables) => postGraphQL(service.graphqlUrl, { query, variables }, who === 'guest' ? {} : { token: tokens[who] });
export const rest = (who, method, path, body) => callRest(service, method, path, { token: who === 'guest' ? undefined : tokens[who], body });
export const rowOf = async (title) => (await service.database.db
    .select()
    .from(documents)
    .where(eq(documents.id, idOf(title))))[0];
export const roleOf = async (persona, organizationId) => (await service.database.db
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.userId, demo.userId[persona]), eq(memberships.organizationId, organizationId))))[0]?.role;
/** Every denial published on the diagnostics channel while `run` executes. */
export async function denialsDuring(run) {
    const events = [];
    const listener = (message) => events.push(message);
    subscribe(DENIAL_CHANNEL, listener);
    try {
        return { result: await run(), events };
    }
    finally {
        unsubscribe(DENIAL_CHANNEL, listener);
    }
}
export const titlesOf = (res) => res.json.data.documents.edges.map((edge) => edge.node.title).sort();
export const restTitlesOf = (res) => res.json.data.map((doc) => doc.title).sort();
//# sourceMappingURL=authorization-suite.js.map