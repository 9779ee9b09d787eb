import { API_SCOPE_NAMES } from '@latchkey/auth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestStatementsDuring } from './support/cost.js';
import { demoOf, reseed, type Demo } from './support/demo.js';
import { postGraphQL, startTestService, type TestService } from './support/service.js';
import { overSse, sseClient } from './support/subscriptions.js';

// Delegated access: what a token may do is its caller's rights AND its scopes (docs/security.md, "Scopes"). A missing
// scope refuses the whole operation or request before any record is loaded: 403 FORBIDDEN with RFC 6750's
// `insufficient_scope` challenge naming every scope it needs.

let service: TestService;
let demo: Demo;
beforeAll(async () => {
  service = await startTestService();
  await reseed(service.database);
  demo = await demoOf(service);
});
afterAll(() => service?.stop());

/** Alice (an OWNER of acme) with a token holding exactly `scope`, issued to an app that is not first-party. */
const alice = (...scope: string[]) => demo.token('alice', { scope, clientId: 'some-app' });
const graphql = async (token: string, query: string, variables?: Record<string, unknown>, accept?: string) =>
  postGraphQL(service.graphqlUrl, { query, variables }, { token, ...(accept ? { accept } : {}) });

const PAGE = '{ documents(first: 2) { edges { node { id title viewerCan { update publish archive delete setLegalHold } } } } }';
const CREATE = 'mutation ($input: CreateDocumentInput!) { createDocument(input: $input) { document { id } userErrors { code } } }';
const challenge = (scopes: string) =>
  expect.stringMatching(new RegExp(`^Bearer error="insufficient_scope", error_description="[^"]+", scope="${scopes}"$`));

describe('GraphQL: an operation needs every scope its fields name (@scope)', () => {
  it('documents:read reads documents, and viewerCan says no to every change; a change is refused whole, before any record is loaded', async () => {
    const token = await alice('openid', 'documents:read');
    const page = await graphql(token, PAGE);
    expect(page.status).toBe(200);
    const nodes = page.json.data.documents.edges.map((edge: { node: { viewerCan: Record<string, boolean> } }) => edge.node.viewerCan);
    expect(nodes.length).toBeGreaterThan(0);
    for (const viewerCan of nodes) expect(Object.values(viewerCan).every((allowed) => allowed === false)).toBe(true);

    const { result: refused, statements } = await requestStatementsDuring(() =>
      graphql(token, CREATE, { input: { organization: 'acme', title: 'Scoped out' } }),
    );
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toEqual(challenge('documents:write'));
    expect(refused.json).toEqual({
      errors: [{ message: expect.stringContaining('documents:write'), extensions: { code: 'FORBIDDEN' } }],
      extensions: expect.anything(),
    });
    expect(refused.json.data).toBeUndefined();
    expect(statements).toEqual([]); // refused before the caller, the organization or any document was read
  });

  it('with every API scope (the default of a minted token) the same caller writes, and viewerCan agrees', async () => {
    const token = await demo.token('alice');
    const page = await graphql(token, PAGE);
    expect(page.json.data.documents.edges[0].node.viewerCan.update).toBe(true);
    const created = await graphql(token, CREATE, { input: { organization: 'acme', title: 'Scoped in' } });
    expect(created.json.data.createDocument.document.id).toEqual(expect.any(String));
  });

  it('`api` (what first-party apps ask for) holds every API scope', async () => {
    const token = await alice('openid', 'api');
    const answer = await graphql(token, '{ me { email } organization(slug: "acme") { billingEmail } mySessions { id } }');
    expect(answer.status).toBe(200);
    expect(answer.json.errors).toBeUndefined();
    expect(answer.json.data.organization.billingEmail).toEqual(expect.any(String));
  });

  it("a first-party app's token that names no API scope holds every one, as every sign-in did before scopes; another app's holds none", async () => {
    const firstParty = await demo.token('alice', { scope: ['openid', 'email'], clientId: 'latchkey-demo' });
    expect(service.config.auth.firstPartyClientIds).toContain('latchkey-demo');
    const answer = await graphql(firstParty, '{ me { email } documents(first: 1) { edges { cursor } } }');
    expect(answer.status).toBe(200);
    expect(answer.json.errors).toBeUndefined();
    const narrowed = await demo.token('alice', { scope: ['openid', 'documents:read'], clientId: 'latchkey-demo' });
    expect((await graphql(narrowed, '{ me { email } }')).status).toBe(403);
    const thirdParty = await demo.token('alice', { scope: ['openid', 'email'], clientId: 'some-app' });
    expect((await graphql(thirdParty, '{ documents(first: 1) { edges { cursor } } }')).status).toBe(403);
  });

  it('the challenge names every scope the operation needs; OpenID scopes alone reach only what needs none', async () => {
    const token = await alice('openid', 'profile', 'email');
    const both = await graphql(token, '{ documents(first: 1) { edges { cursor } } organization(slug: "acme") { name } }');
    expect(both.status).toBe(403);
    expect(both.headers.get('www-authenticate')).toEqual(challenge('documents:read organizations:read'));
    const nested = await graphql(token, '{ viewer { subject user { email } } }');
    expect(nested.headers.get('www-authenticate')).toEqual(challenge('account:read'));
    const viewer = await graphql(token, '{ viewer { subject scope } status { version } }');
    expect(viewer.status).toBe(200);
    expect(viewer.json.data.viewer.scope).toEqual(['openid', 'profile', 'email']);
  });

  it('under application/json the refusal is 200 with the same error and challenge', async () => {
    const answer = await graphql(await alice('documents:read'), '{ me { id } }', undefined, 'application/json');
    expect(answer.status).toBe(200);
    expect(answer.json.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(answer.headers.get('www-authenticate')).toEqual(challenge('account:read'));
  });

  it('a subscription needs documents:read when it starts', async () => {
    const token = await alice('organizations:read');
    const stream = overSse(sseClient(service.graphqlUrl, token), {
      query: 'subscription { documentChanged(organization: "acme") { kind } }',
    });
    await stream.ended(30_000);
    const refusal = JSON.stringify(stream.results[0] ?? stream.error);
    expect(refusal).toContain('FORBIDDEN');
    expect(refusal).toContain('documents:read');
  });
});

describe('REST: each route names its scope in the route table', () => {
  const rest = (token: string, path: string, init: RequestInit = {}) =>
    fetch(`${service.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
    });

  it('a token without it is refused with 403 and the challenge, before the body is read or any record loaded', async () => {
    const readOnly = await alice('documents:read');
    const listed = await rest(readOnly, '/api/documents?first=1');
    expect(listed.status).toBe(200);
    const { result: refused, statements } = await requestStatementsDuring(() =>
      rest(readOnly, '/api/documents', { method: 'POST', body: '{not json' }),
    );
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toEqual(challenge('documents:write'));
    expect(await refused.json()).toEqual({
      statusCode: 403,
      error: 'Forbidden',
      message: expect.stringContaining('documents:write'),
      scope: 'documents:write',
    });
    expect(statements).toEqual([]);

    const writeOnly = await alice('documents:write');
    const unread = await rest(writeOnly, '/api/documents?first=1');
    expect(unread.status).toBe(403);
    expect(unread.headers.get('www-authenticate')).toEqual(challenge('documents:read'));
  });
});

describe('pnpm latchkey token and every scope of the vocabulary', () => {
  it('every scope a field or route names is in the vocabulary, and every one of the vocabulary is named somewhere', async () => {
    const { readFileSync, readdirSync } = await import('node:fs');
    const schemaDir = new URL('../../../schema/', import.meta.url);
    const sdl = readdirSync(schemaDir)
      .map((name) => readFileSync(new URL(name, schemaDir), 'utf8'))
      .join('\n');
    const rest = readFileSync(new URL('../src/rest/documents.ts', import.meta.url), 'utf8');
    const named = new Set([...`${sdl}\n${rest}`.matchAll(/scope(?:\(name)?: "?'?([a-z]+:[a-z]+)/g)].map((match) => match[1]!));
    expect([...named].sort()).toEqual([...API_SCOPE_NAMES].sort());
  });
});
