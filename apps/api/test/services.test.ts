import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeJwt, exportJWK, generateKeyPair } from 'jose';
import * as oidc from 'openid-client';
import { testTempDir } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows, ofType } from './support/audit.js';
import { discover, startProviderFor } from './support/relying-party.js';
import type { TestService } from './support/service.js';
import { overSse, sseClient } from './support/subscriptions.js';

// Services (client credentials, RFC 6749 section 4.4): a back-end registered with one organization, a role and the
// API scopes it may ask for gets tokens with no user (openid-client's clientCredentialsGrant, private_key_jwt or a
// secret), and the API treats it as a principal of its own kind (docs/security.md, "Services").

const READER_SECRET = 'acme-reader-secret-that-is-long-enough-0123456789';
const GHOST_SECRET = 'ghost-service-secret-that-is-long-enough-0123456789';
const ADMIN_SECRET = 'acme-admin-secret-that-is-long-enough-0123456789';
const GLOBEX_SECRET = 'globex-feed-secret-that-is-long-enough-0123456789';

let service: TestService;
let base: string;
/** acme's EDITOR, authenticating with its own key (private_key_jwt) */
let reports: oidc.Configuration;
/** acme's VIEWER (no role named), authenticating with a secret, registered for documents:read alone */
let reader: oidc.Configuration;
/** globex's VIEWER */
let globexFeed: oidc.Configuration;
/** acme's ADMIN, which may manage roles */
let admin: oidc.Configuration;
/** registered with an organization that does not exist */
let ghost: oidc.Configuration;

beforeAll(async () => {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  // Budgets that barely refill, so what a caller spent is still missing when it asks.
  const budgetFile = join(testTempDir(), 'budget.json');
  const slow = { capacity: 100_000, restorePerSecond: 0.001 };
  writeFileSync(budgetFile, JSON.stringify({ guest: slow, plans: { FREE: { ...slow, capacity: 50_000 }, PRO: slow } }));
  ({ service, base } = await startProviderFor(
    [
      {
        client_id: 'acme-reports',
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [{ ...(await exportJWK(publicKey)), alg: 'ES256', use: 'sig' }] },
        organization: 'acme',
        role: 'EDITOR',
        scope: 'documents:read documents:write organizations:read',
      },
      {
        client_id: 'acme-reader',
        client_secret: READER_SECRET,
        grant_types: ['client_credentials'],
        organization: 'acme',
        scope: 'documents:read',
      },
      {
        client_id: 'globex-feed',
        client_secret: GLOBEX_SECRET,
        grant_types: ['client_credentials'],
        organization: 'globex',
        scope: 'documents:read',
      },
      {
        client_id: 'acme-admin',
        client_secret: ADMIN_SECRET,
        token_endpoint_auth_method: 'client_secret_post',
        grant_types: ['client_credentials'],
        organization: 'acme',
        role: 'ADMIN',
        scope: 'documents:read documents:write organizations:manage',
      },
      {
        client_id: 'ghost-service',
        client_secret: GHOST_SECRET,
        grant_types: ['client_credentials'],
        organization: 'no-such-org',
        scope: 'documents:read',
      },
    ],
    { API_BUDGET_FILE: budgetFile },
  ));
  reports = await discover(base, 'acme-reports', oidc.PrivateKeyJwt(privateKey));
  reader = await discover(base, 'acme-reader', oidc.ClientSecretBasic(READER_SECRET));
  globexFeed = await discover(base, 'globex-feed', oidc.ClientSecretBasic(GLOBEX_SECRET));
  admin = await discover(base, 'acme-admin', oidc.ClientSecretPost(ADMIN_SECRET));
  ghost = await discover(base, 'ghost-service', oidc.ClientSecretBasic(GHOST_SECRET));
}, 60_000);
afterAll(() => service?.stop());

const tokenOf = async (client: oidc.Configuration, scope: string, options?: oidc.DPoPOptions) =>
  (await oidc.clientCredentialsGrant(client, { scope }, options)).access_token;

async function graphql(token: string, query: string, variables?: Record<string, unknown>) {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, challenge: response.headers.get('www-authenticate'), json: (await response.json()) as any };
}

/** The token endpoint's refusal of a request: its OAuth error and HTTP status. */
async function refusal(request: Promise<unknown>): Promise<{ error: string; status: number }> {
  try {
    await request;
  } catch (error) {
    // A 401 comes with its challenge (WWW-Authenticate), whose `error` openid-client reports as the cause.
    const { error: code, status, cause } = error as oidc.ResponseBodyError & { cause?: oidc.WWWAuthenticateChallenge[] };
    return { error: code ?? (Array.isArray(cause) ? cause[0]?.parameters.error : undefined), status };
  }
  throw new Error('the token request was not refused');
}

const DOCUMENTS = '{ documents(first: 100) { edges { node { id title organization { slug } } } } }';

describe('a service gets a token with no user', () => {
  it('private_key_jwt: sub and client_id are its client id; no amr, acr, auth_time or sid; the API audience; the stated lifetime', async () => {
    const grant = await oidc.clientCredentialsGrant(reports, { scope: 'documents:read documents:write' });
    expect(grant.token_type.toLowerCase()).toBe('bearer');
    expect(grant.scope).toBe('documents:read documents:write');
    const claims = decodeJwt(grant.access_token);
    expect(claims).toMatchObject({ sub: 'acme-reports', client_id: 'acme-reports', aud: service.config.tokens.audience });
    for (const claim of ['amr', 'acr', 'auth_time', 'sid']) expect(claims).not.toHaveProperty(claim);
    expect(claims.exp! - claims.iat!).toBe(service.config.tokens.accessTokenTtlSeconds);
    expect(grant.expires_in).toBe(service.config.tokens.accessTokenTtlSeconds);
    // No refresh token: a service asks again.
    expect(grant.refresh_token).toBeUndefined();
  });

  it('a secret (client_secret_basic) works as well', async () => {
    expect(decodeJwt(await tokenOf(reader, 'documents:read')).sub).toBe('acme-reader');
  });

  it('a DPoP-bound token: the proof of the token request binds it, and the API wants the proof on every call', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const dpop = oidc.getDPoPHandle(reports, { privateKey, publicKey });
    const grant = await oidc.clientCredentialsGrant(reports, { scope: 'documents:read' }, { DPoP: dpop });
    expect(grant.token_type.toLowerCase()).toBe('dpop');
    expect(decodeJwt(grant.access_token)['cnf']).toHaveProperty('jkt');
    const answer = await oidc.fetchProtectedResource(
      reports,
      grant.access_token,
      new URL(`${base}/graphql`),
      'POST',
      JSON.stringify({ query: '{ viewer { subject } }' }),
      new Headers({ 'content-type': 'application/json', accept: 'application/graphql-response+json' }),
      { DPoP: dpop },
    );
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as any).data.viewer.subject).toBe('acme-reports');
    // As a bearer token it is worth nothing.
    expect((await graphql(grant.access_token, '{ viewer { subject } }')).status).toBe(401);
  });
});

describe('the API treats it as a principal of its own kind, within its organization', () => {
  it('lists its own organization’s documents and never another’s', async () => {
    const token = await tokenOf(reports, 'documents:read');
    const page = await graphql(token, DOCUMENTS);
    expect(page.status).toBe(200);
    const slugs = new Set(page.json.data.documents.edges.map((edge: any) => edge.node.organization.slug));
    expect([...slugs]).toEqual(['acme']);
    // As an EDITOR it sees drafts too.
    expect(page.json.data.documents.edges.map((edge: any) => edge.node.title)).toContain('Draft roadmap');

    const other = await graphql(token, '{ documents(filter: { organization: "globex" }) { edges { node { id } } } }');
    expect(other.json.data.documents.edges).toEqual([]);
    const byTitle = await graphql(token, '{ documentBy(lookup: { title: { organization: "globex", title: "Globex handbook" } }) { id } }');
    expect(byTitle.json.errors[0].extensions.code).toBe('NOT_FOUND');
    expect(byTitle.json.data.documentBy).toBeNull();

    // globex's own service sees globex's, and none of acme's.
    const globex = await graphql(await tokenOf(globexFeed, 'documents:read'), DOCUMENTS);
    expect(new Set(globex.json.data.documents.edges.map((edge: any) => edge.node.organization.slug))).toEqual(new Set(['globex']));
  });

  it('a VIEWER service sees only the published documents; its role rules apply as to a person', async () => {
    const page = await graphql(await tokenOf(reader, 'documents:read'), DOCUMENTS);
    const titles = page.json.data.documents.edges.map((edge: any) => edge.node.title);
    expect(titles).not.toContain('Draft roadmap');
    expect(titles.length).toBeGreaterThan(0);
  });

  it('viewer names it (subject = client id, its scopes, no sign-in); viewer.user, mySessions and passkeys are refused for want of their scope', async () => {
    const token = await tokenOf(reports, 'documents:read');
    const viewer = await graphql(token, '{ viewer { subject scope amr acr authTime } }');
    expect(viewer.status).toBe(200);
    expect(viewer.json.data.viewer).toEqual({ subject: 'acme-reports', scope: ['documents:read'], amr: [], acr: null, authTime: null });

    for (const query of [
      '{ viewer { user { id email } } }',
      '{ me { id } }',
      '{ mySessions { id } }',
      'mutation { endOtherSessions }',
      'mutation { renamePasskey(id: "x", label: "y") { passkey { id } } }',
    ]) {
      const refused = await graphql(token, query);
      expect(refused.status, query).toBe(403);
      expect(refused.json.errors[0].extensions.code, query).toBe('FORBIDDEN');
      expect(refused.challenge, query).toMatch(/^Bearer error="insufficient_scope"/);
    }
  });

  it('a mutation outside its scopes is refused whole (403 insufficient_scope); within them its role decides', async () => {
    const readOnly = await tokenOf(reports, 'documents:read');
    const documents = (await graphql(readOnly, DOCUMENTS)).json.data.documents.edges.map((edge: any) => edge.node);
    const draft = documents.find((document: any) => document.title === 'Draft roadmap');
    const update = 'mutation ($input: UpdateDocumentInput!) { updateDocument(input: $input) { document { id body } userErrors { code } } }';
    const input = { id: draft.id, body: 'Edited by the reports service.' };

    const refused = await graphql(readOnly, update, { input });
    expect(refused.status).toBe(403);
    expect(refused.challenge).toMatch(/^Bearer error="insufficient_scope".*scope="documents:write"$/);

    // organizations:manage is beyond its registration: it cannot even ask for it (below); role changes need it.
    const changeRole = await graphql(
      await tokenOf(reports, 'documents:read organizations:read'),
      'mutation { changeMemberRole(input: { organization: "acme", userId: "00000000-0000-4000-8000-000000000000", role: VIEWER }) { userErrors { code } } }',
    );
    expect(changeRole.status).toBe(403);
    expect(changeRole.challenge).toMatch(/insufficient_scope.*scope="organizations:manage"/);

    // With documents:write, an EDITOR service edits acme's documents.
    const writer = await tokenOf(reports, 'documents:read documents:write');
    const edited = await graphql(writer, update, { input });
    expect(edited.status).toBe(200);
    expect(edited.json.data.updateDocument.document.body).toBe('Edited by the reports service.');
  });

  it('it creates no document (a document’s owner is a person) and publishes none (that needs a verified e-mail): FORBIDDEN, no 5xx', async () => {
    const writer = await tokenOf(reports, 'documents:read documents:write');
    const created = await graphql(
      writer,
      'mutation { createDocument(input: { organization: "acme", title: "By a service" }) { document { id } userErrors { code } } }',
    );
    expect(created.status).toBe(200);
    expect(created.json.errors[0].extensions.code).toBe('FORBIDDEN');
    const draft = (await graphql(writer, DOCUMENTS)).json.data.documents.edges.find((edge: any) => edge.node.title === 'Draft roadmap');
    const published = await graphql(writer, `mutation { publishDocument(id: "${draft.node.id}") { document { status } } }`);
    expect(published.json.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it('over REST as over GraphQL: its organization’s documents only', async () => {
    const token = await tokenOf(reports, 'documents:read');
    const response = await fetch(`${base}/api/documents?first=100`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('Draft roadmap');
    expect(text).not.toContain('Globex');
  });

  it('subscribes to its organization’s changes, each event judged on its rights at delivery; another organization is NOT_FOUND', async () => {
    const writer = await tokenOf(reports, 'documents:read documents:write');
    const stream = overSse(sseClient(`${base}/graphql`, writer), {
      query: 'subscription { documentChanged(organization: "acme") { kind document { title } } }',
    });
    const draft = (await graphql(writer, DOCUMENTS)).json.data.documents.edges.find((edge: any) => edge.node.title === 'Draft roadmap');
    // The stream is open once a change made after it arrives: change until one does.
    for (let attempt = 0; stream.results.length === 0 && attempt < 50; attempt++) {
      await graphql(writer, 'mutation ($input: UpdateDocumentInput!) { updateDocument(input: $input) { document { id } } }', {
        input: { id: draft.node.id, body: `Change ${attempt}.` },
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await stream.waitFor(1, 10_000);
    expect(stream.results[0]!.data.documentChanged).toEqual({ kind: 'UPDATED', document: { title: 'Draft roadmap' } });
    stream.dispose();

    const other = overSse(sseClient(`${base}/graphql`, writer), {
      query: 'subscription { documentChanged(organization: "globex") { kind } }',
    });
    await other.ended(10_000);
    expect(JSON.stringify(other.results[0] ?? other.error)).toContain('NOT_FOUND');
  });

  it('an ADMIN service changes a member’s role within its own (audited as client:<id>); what needs a step-up is never a service’s', async () => {
    const token = await tokenOf(admin, 'documents:read documents:write organizations:manage');
    const page = await graphql(token, '{ documents(first: 100) { edges { node { id title owner { id email } } } } }');
    const draft = page.json.data.documents.edges.find((edge: any) => edge.node.title === 'Draft roadmap').node;
    expect(draft.owner.email).toBe('erin@acme.test');
    const change = (role: string) =>
      graphql(
        token,
        `mutation { changeMemberRole(input: { organization: "acme", userId: "${draft.owner.id}", role: ${role} }) { membership { role } userErrors { code } } }`,
      );
    expect((await change('VIEWER')).json.data.changeMemberRole.membership.role).toBe('VIEWER');
    expect((await change('EDITOR')).json.data.changeMemberRole.membership.role).toBe('EDITOR');
    // Not above its own role.
    expect((await change('OWNER')).json.errors[0].extensions.code).toBe('FORBIDDEN');
    const changed = ofType(await auditRows(service), 'role.changed').filter((row) => row.actor === 'client:acme-admin');
    expect(changed.map((row) => (row.details as { to: string }).to)).toEqual(['VIEWER', 'EDITOR']);

    // A legal hold wants a recent phishing-resistant sign-in; a service signs nobody in.
    const hold = await graphql(token, `mutation { setLegalHold(id: "${draft.id}", legalHold: true) { document { legalHold } } }`);
    expect(hold.json.errors[0].extensions.code).toBe('INSUFFICIENT_USER_AUTHENTICATION');
  });

  it('each token it was given is in the audit trail under its own name, with its scopes and binding', async () => {
    const issued = ofType(await auditRows(service), 'service.token_issued').filter((row) => row.actor === 'client:acme-reports');
    expect(issued.map((row) => row.details)).toContainEqual({
      clientId: 'acme-reports',
      scope: 'documents:read documents:write',
      dpop: false,
    });
    expect(issued.map((row) => row.details)).toContainEqual({ clientId: 'acme-reports', scope: 'documents:read', dpop: true });
    expect(issued.every((row) => row.subject === null && row.address !== null)).toBe(true);
  });

  it('its refusals are in the audit trail under its own name (client:<id>), never an account id', async () => {
    const rows = ofType(await auditRows(service), 'policy.denied');
    const its = rows.filter((row) => row.actor === 'client:acme-reports');
    expect(its.length).toBeGreaterThan(0);
    expect(its.map((row) => (row.details as { ability: string }).ability)).toContain('create');
  });

  it('its budget is its own, by client id, sized by its organization’s plan', async () => {
    const RATE = '{ rateLimit { plan maximumAvailable currentlyAvailable } }';
    const reportsToken = await tokenOf(reports, 'documents:read');
    const readerToken = await tokenOf(reader, 'documents:read');
    const before = (await graphql(reportsToken, RATE)).json.data.rateLimit;
    expect(before).toMatchObject({ plan: 'PRO', maximumAvailable: 100_000 });
    const readerBefore = (await graphql(readerToken, RATE)).json.data.rateLimit;
    await graphql(reportsToken, DOCUMENTS);
    const after = (await graphql(reportsToken, RATE)).json.data.rateLimit;
    expect(after.currentlyAvailable).toBeLessThan(before.currentlyAvailable);
    // Another service of the same organization spends a bucket of its own: what this one spent is not missing there.
    expect((await graphql(readerToken, RATE)).json.data.rateLimit).toEqual(readerBefore);
    // globex is on FREE.
    const globex = (await graphql(await tokenOf(globexFeed, 'documents:read'), RATE)).json.data.rateLimit;
    expect(globex).toMatchObject({ plan: 'FREE', maximumAvailable: 50_000 });
  });
});

describe('discovery', () => {
  it('offers the grant when a service is registered', async () => {
    const discovery = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as { grant_types_supported: string[] };
    expect(discovery.grant_types_supported).toContain('client_credentials');
  });
});

describe('bad input at the token endpoint', () => {
  it.each([
    ['a scope about a person’s own account', reportsOf, 'account:read'],
    ['sessions:manage', reportsOf, 'documents:read sessions:manage'],
    ['an OpenID scope', reportsOf, 'openid documents:read'],
    ['api (every scope)', reportsOf, 'api'],
    ['an unknown scope', reportsOf, 'documents:read nope:nothing'],
    ['a scope beyond its registration', reportsOf, 'organizations:manage'],
    ['documents:write for a service registered for documents:read', readerOf, 'documents:write'],
    ['no scope at all', reportsOf, ''],
  ])('%s: invalid_scope', async (_case, client, scope) => {
    expect(await refusal(oidc.clientCredentialsGrant(client(), scope === '' ? {} : { scope }))).toEqual({
      error: 'invalid_scope',
      status: 400,
    });
  });

  it('a service whose organization does not exist gets no token: invalid_client, the reason in the log', async () => {
    expect(await refusal(tokenOf(ghost, 'documents:read'))).toEqual({ error: 'invalid_client', status: 401 });
    const logged = service.logs.find((line) => line['clientId'] === 'ghost-service' && line['reason']);
    expect(logged?.['reason']).toBe('its organization "no-such-org" does not exist');
    const audited = ofType(await auditRows(service), 'service.token_refused');
    expect(audited.map((row) => [row.actor, row.details])).toContainEqual([
      'client:ghost-service',
      { clientId: 'ghost-service', reason: 'its organization "no-such-org" does not exist' },
    ]);
    expect(ofType(await auditRows(service), 'service.token_issued').some((row) => row.actor === 'client:ghost-service')).toBe(false);
  });

  it('a wrong secret, or a key not its own, is refused (invalid_client)', async () => {
    const wrong = await discover(base, 'acme-reader', oidc.ClientSecretBasic(`${READER_SECRET}-wrong`));
    expect((await refusal(tokenOf(wrong, 'documents:read'))).error).toBe('invalid_client');
    const { privateKey } = await generateKeyPair('ES256');
    const impostor = await discover(base, 'acme-reports', oidc.PrivateKeyJwt(privateKey));
    expect((await refusal(tokenOf(impostor, 'documents:read'))).error).toBe('invalid_client');
  });
});

function reportsOf() {
  return reports;
}
function readerOf() {
  return reader;
}
