import { seedDemoData, users } from '@latchkey/db';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledDocuments } from '../src/graphql/plugins/use-compiled-execution.js';
import { postGraphQL, startTestService, type TestService } from './support/service.js';

// A document is executed by graphql-js (Yoga's executor) on its first use and compiled by graphql-jit from its
// second on: every case is sent three times and the three answers must be identical, status and body byte for byte.
let service: TestService;
const tokenOf = async (email: string) => {
  const [user] = await service.database.db.select({ id: users.id }).from(users).where(eq(users.email, email));
  return service.token(user!.id);
};

beforeAll(async () => {
  service = await startTestService();
  await seedDemoData(service.database);
});
afterAll(() => service?.stop());

const GQL = 'application/graphql-response+json';
const cases: { name: string; email: string | null; query: string; variables?: Record<string, unknown>; accept?: string }[] = [
  {
    name: 'a field denied inside a named fragment and an alias (spec Authorization 12: FORBIDDEN at its path, with locations)',
    email: 'bob@acme.test',
    query:
      'query Mine { ...Account } fragment Account on Query { me { email memberships { role ... on Membership { organization { slug mail: billingEmail } } } } }',
  },
  {
    name: "another tenant's organization: null + NOT_FOUND (spec Authorization 6)",
    email: 'carol@globex.test',
    query: 'query ($slug: String!) { organization(slug: $slug) { slug plan } }',
    variables: { slug: 'acme' },
  },
  {
    name: 'documents with owners, organization, internalNotes and viewerCan, as a VIEWER (field rules per row)',
    email: 'bob@acme.test',
    query:
      '{ documents(first: 5) { edges { cursor node { title status internalNotes owner { displayName email } organization { slug } viewerCan { update publish archive delete setLegalHold } } } pageInfo { hasNextPage } } }',
  },
  {
    name: 'a variable of the wrong type: the request error graphql-js words (BAD_USER_INPUT)',
    email: 'alice@acme.test',
    query: 'query ($first: Int) { documents(first: $first) { edges { node { id } } } }',
    variables: { first: 'twenty' },
    accept: GQL,
  },
  {
    name: '@oneOf lookup given both keys through a variable: refused like graphql-js refuses it',
    email: 'alice@acme.test',
    query: 'query ($lookup: DocumentLookup!) { documentBy(lookup: $lookup) { title } }',
    variables: { lookup: { id: '00000000-0000-0000-0000-000000000000', title: 'x' } },
  },
  {
    name: 'a malformed id: BAD_USER_INPUT at the field (200), the rest of the operation answered',
    email: 'alice@acme.test',
    query: '{ status { service } document(id: "not-a-uuid") { title } }',
  },
  {
    name: 'a mutation: a business failure in userErrors, twice the same',
    email: 'bob@acme.test',
    query: 'mutation { archiveDocument(id: "00000000-0000-0000-0000-000000000000") { document { id } } }',
    accept: GQL,
  },
];

describe('compiled execution: cached documents answer exactly as graphql-js answers them', () => {
  it.each(cases)('$name', async ({ email, query, variables, accept }) => {
    const token = email ? await tokenOf(email) : undefined;
    const answers = [];
    for (let use = 0; use < 3; use++) {
      const res = await postGraphQL(
        service.graphqlUrl,
        { query, ...(variables ? { variables } : {}) },
        { ...(token ? { token } : {}), ...(accept ? { accept } : {}) },
      );
      answers.push({ status: res.status, text: res.text });
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });

  it('documents used more than once are compiled; one used once is not', async () => {
    const token = await tokenOf('alice@acme.test');
    const before = compiledDocuments();
    const once = `{ status { service } a${Date.now()}: status { service } }`;
    await postGraphQL(service.graphqlUrl, { query: once }, { token });
    expect(compiledDocuments()).toBe(before);
    await postGraphQL(service.graphqlUrl, { query: once }, { token });
    expect(compiledDocuments()).toBe(before + 1);
  });
});
