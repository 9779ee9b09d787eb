import { documents, memberships } from '@latchkey/db';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { demoOf, reseed } from './demo.js';
import { postGraphQL, startTestService } from './service.js';
/**
 * spec Multi-factor rules 6 / RFC 9470: step-up at the resource server, over real HTTP against the seeded
 * database. Operations marked in the SDL (`@stepUp`) or judged by their arguments (a role change to OWNER)
 * answer an allowed caller whose access token is too weak or too old with INSUFFICIENT_USER_AUTHENTICATION and
 * the `WWW-Authenticate` challenge; everyone else gets exactly what they got before.
 */
export const GQL = 'application/graphql-response+json';
export const JSON_TYPE = 'application/json';
export const PHR = 'urn:latchkey:acr:phr';
export const TWO_FACTOR = 'urn:latchkey:acr:2fa';
export const ONE_FACTOR = 'urn:latchkey:acr:1fa';
export const HOLD = 'mutation ($id: ID!, $hold: Boolean!) { setLegalHold(id: $id, legalHold: $hold) { document { id legalHold } userErrors { code } } }';
export const ROLE = 'mutation ($input: ChangeMemberRoleInput!) { changeMemberRole(input: $input) { membership { role } userErrors { code } } }';
export const REMOVE_PASSKEY = 'mutation ($id: ID!) { removePasskey(id: $id) { removedPasskeyId } }';
export const VIEWER_CAN = 'query ($id: ID!) { document(id: $id) { id viewerCan { update publish archive delete setLegalHold } } }';
export const CHALLENGE_PHR = 'Bearer error="insufficient_user_authentication", error_description="A different authentication level is required", acr_values="urn:latchkey:acr:phr"';
export const CHALLENGE_FRESH = 'Bearer error="insufficient_user_authentication", error_description="More recent authentication is required", max_age=300';
export const CHALLENGE_OWNER = 'Bearer error="insufficient_user_authentication", error_description="A different authentication level is required", acr_values="urn:latchkey:acr:2fa", max_age=900';
// Live bindings: assigned by useStepUpService's hooks, read by the tests of the file that called it.
export let service;
export let demo;
/** Starts this file's service (before its tests), seeds the demo data before each test, stops it after them. */
export function useStepUpService() {
    beforeAll(async () => {
        service = await startTestService();
    });
    afterAll(() => service?.stop());
    beforeEach(async () => {
        await reseed(service.database);
        demo = await demoOf(service);
    });
}
export const now = () => Math.floor(Date.now() / 1000);
/** A token as an e-mailed link (one-time token) sign-in gives it: one factor, just now. */
export const ottToken = (persona) => demo.token(persona, { amr: ['otp'], acr: ONE_FACTOR });
export const idOf = (title) => demo.documentId.get(title);
export const gql = async (token, query, variables, accept = GQL) => postGraphQL(service.graphqlUrl, { query, variables }, { token, accept });
export const locationOf = (query, field) => {
    const index = query.indexOf(`${field}(`);
    return { line: 1, column: index + 1 };
};
export const legalHoldOf = async (title) => (await service.database.db
    .select({ legalHold: documents.legalHold })
    .from(documents)
    .where(eq(documents.id, idOf(title))))[0].legalHold;
export const roleOf = async (persona) => {
    const [row] = await service.database.db
        .select({ role: memberships.role })
        .from(memberships)
        .where(and(eq(memberships.userId, demo.userId[persona])));
    return row?.role;
};
//# sourceMappingURL=step-up-suite.js.map