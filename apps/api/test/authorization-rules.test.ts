/**
 * spec "Authentication > Authorization" rules 1-15, "Events" 2-3 and the error vocabulary, proved over real
 * HTTP against the seeded database, through GraphQL and (where a route exists) REST, with the same outcome
 * on both surfaces: GraphQL `extensions.code` NOT_FOUND / FORBIDDEN / UNAUTHENTICATED <-> REST 404 / 403 / 401.
 */
import { randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { documents, memberships, QUERY_CHANNEL, users } from '@latchkey/db';
import { DENIAL_CHANNEL, onDenied, type DenialEvent } from '@latchkey/policy';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callRest, demoOf, reseed, STEPPED_UP, type Demo, type Persona } from './support/demo.js';
import { postGraphQL, startTestService, type TestService } from './support/service.js';

// ---------------------------------------------------------------------------------------------------------
// Operations

const DOCUMENT = `query ($id: ID!) { document(id: $id) { id title status } }`;
const DOCUMENT_CAN = `query ($id: ID!) { document(id: $id) { id title viewerCan { update publish archive delete setLegalHold } } }`;
const LIST = `query ($first: Int = 100, $after: String) {
  documents(first: $first, after: $after) { edges { node { id title status organization { slug } } } pageInfo { hasNextPage endCursor } }
}`;
const CREATE = `mutation ($input: CreateDocumentInput!) {
  createDocument(input: $input) { document { id title status organization { slug } owner { id } } userErrors { field message code } }
}`;
const UPDATE = `mutation ($input: UpdateDocumentInput!) {
  updateDocument(input: $input) { document { id title body } userErrors { field message code } }
}`;
const PUBLISH = `mutation ($id: ID!) { publishDocument(id: $id) { document { id status } userErrors { field message code } } }`;
const ARCHIVE = `mutation ($id: ID!) { archiveDocument(id: $id) { document { id status } userErrors { field message code } } }`;
const DELETE = `mutation ($id: ID!) { deleteDocument(id: $id) { deletedDocumentId userErrors { field message code } } }`;
const HOLD = `mutation ($id: ID!, $hold: Boolean!) { setLegalHold(id: $id, legalHold: $hold) { document { id legalHold } userErrors { field message code } } }`;
const ROLE = `mutation ($input: ChangeMemberRoleInput!) {
  changeMemberRole(input: $input) { membership { role user { id } organization { slug } } userErrors { field message code } }
}`;

// ---------------------------------------------------------------------------------------------------------
// Seed (docs/endpoints.md, "Demo data")

const QUARTERLY = 'Quarterly plan'; // acme, PUBLISHED, alice
const ROADMAP = 'Draft roadmap'; // acme, DRAFT, erin
const LITIGATION = 'Litigation memo'; // acme, PUBLISHED, legal hold, alice
const LAUNCH = 'Launch announcement'; // acme, PUBLISHED, embargo 2099, alice
const PRICING = 'Old pricing'; // acme, ARCHIVED, erin
const HANDBOOK = 'Globex handbook'; // globex, PUBLISHED, carol
const MERGER = 'Globex merger draft'; // globex, DRAFT, carol
const ACME_TITLES = [QUARTERLY, ROADMAP, LITIGATION, LAUNCH, PRICING];
const GLOBEX_TITLES = [HANDBOOK, MERGER];

type Who = Persona | 'guest';
type Code = 'NOT_FOUND' | 'FORBIDDEN' | 'UNAUTHENTICATED';
const HTTP_STATUS: Record<Code, number> = { NOT_FOUND: 404, FORBIDDEN: 403, UNAUTHENTICATED: 401 };
const MESSAGES: Record<Code, string> = {
  NOT_FOUND: 'The requested record was not found.',
  FORBIDDEN: 'You are not allowed to do this.',
  UNAUTHENTICATED: 'Authentication is required.',
};
/** Names that exist only inside the policy layer: no response body may contain them (spec Events 3). */
const POLICY_NAMES =
  /DocumentPolicy|AccountPolicy|OrganizationPolicy|RoutePolicy|holdsRole|viewEmail|viewInternalNotes|viewBilling|changeRole|AUTHORIZATION_DENIED|AuthorizationDenied/;

let service: TestService;
let demo: Demo;
let tokens: Record<Persona, string>;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

beforeEach(async () => {
  await reseed(service.database);
  demo = await demoOf(service);
  const personas: Persona[] = ['alice', 'bob', 'erin', 'carol', 'root'];
  // Tokens that meet every step-up (spec Multi-factor rules 6): these rules hold for them; step-up.test.ts proves
  // what a weaker token gets.
  tokens = Object.fromEntries(await Promise.all(personas.map(async (p) => [p, await demo.token(p, STEPPED_UP)] as const))) as Record<
    Persona,
    string
  >;
});

const idOf = (title: string) => {
  const id = demo.documentId.get(title);
  if (!id) throw new Error(`no seeded document "${title}"`);
  return id;
};
const gql = (who: Who, query: string, variables?: Record<string, unknown>) =>
  postGraphQL(service.graphqlUrl, { query, variables }, who === 'guest' ? {} : { token: tokens[who] });
const rest = (who: Who, method: string, path: string, body?: unknown) =>
  callRest(service, method, path, { token: who === 'guest' ? undefined : tokens[who], body });
const rowOf = async (title: string) =>
  (
    await service.database.db
      .select()
      .from(documents)
      .where(eq(documents.id, idOf(title)))
  )[0];
const roleOf = async (persona: Persona, organizationId: string) =>
  (
    await service.database.db
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.userId, demo.userId[persona]), eq(memberships.organizationId, organizationId)))
  )[0]?.role;

type Response = Awaited<ReturnType<typeof gql>>;

/** An execution error at the root field: null there, one error with only a code, transport 200. */
function expectGraphQLRefusal(res: Response, field: string, code: Code) {
  expect(res.status, res.text).toBe(200);
  expect(res.json.data).toEqual({ [field]: null });
  expect(res.json.errors).toHaveLength(1);
  expect(res.json.errors[0]).toMatchObject({ message: MESSAGES[code], path: [field], extensions: { code } });
  expect(res.json.errors[0].extensions).toEqual({ code });
  expect(res.text).not.toMatch(POLICY_NAMES);
}

/** The REST twin: the status of the code and a `{statusCode, message, error}` body. */
function expectRestRefusal(res: Response, code: Code) {
  expect(res.status, res.text).toBe(HTTP_STATUS[code]);
  expect(res.json).toMatchObject({
    statusCode: HTTP_STATUS[code],
    message: code === 'UNAUTHENTICATED' ? expect.any(String) : MESSAGES[code],
    error: expect.any(String),
  });
  if (code === 'UNAUTHENTICATED') expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  expect(res.text).not.toMatch(POLICY_NAMES);
}

function expectSameRefusal(graphql: Response, field: string, restResponse: Response, code: Code) {
  expectGraphQLRefusal(graphql, field, code);
  expectRestRefusal(restResponse, code);
}

/** A guest's GraphQL operation refused whole before execution (spec Authorization 4, 7). */
function expectGuestRefused(res: Response) {
  expect(res.status, res.text).toBe(401);
  expect(res.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
  expect(res.headers.get('www-authenticate')).toBe('Bearer');
  expect(res.json).not.toHaveProperty('data');
  expect(res.json.errors).toEqual([{ message: 'Sign in to perform this operation.', extensions: { code: 'UNAUTHENTICATED' } }]);
}

function expectUserError(graphql: Response, field: string, restResponse: Response | null, code: string) {
  expect(graphql.status).toBe(200);
  expect(graphql.json.errors).toBeUndefined();
  expect(graphql.json.data[field]).toMatchObject({ userErrors: [{ code }] });
  expect(graphql.json.data[field].userErrors).toHaveLength(1);
  if (restResponse) {
    expect(restResponse.status, restResponse.text).toBe(409);
    expect(restResponse.json).toMatchObject({
      statusCode: 409,
      error: 'Conflict',
      code,
      message: graphql.json.data[field].userErrors[0].message,
    });
  }
}

/** Every denial published on the diagnostics channel while `run` executes. */
async function denialsDuring<T>(run: () => Promise<T>): Promise<{ result: T; events: DenialEvent[] }> {
  const events: DenialEvent[] = [];
  const listener = (message: unknown) => events.push(message as DenialEvent);
  subscribe(DENIAL_CHANNEL, listener);
  try {
    return { result: await run(), events };
  } finally {
    unsubscribe(DENIAL_CHANNEL, listener);
  }
}

async function statementsDuring<T>(run: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const listener = (message: unknown) => statements.push((message as { sql: string }).sql);
  subscribe(QUERY_CHANNEL, listener);
  try {
    return { result: await run(), statements };
  } finally {
    unsubscribe(QUERY_CHANNEL, listener);
  }
}

const titlesOf = (res: Response) => (res.json.data.documents.edges as { node: { title: string } }[]).map((edge) => edge.node.title).sort();
const restTitlesOf = (res: Response) => (res.json.data as { title: string }[]).map((doc) => doc.title).sort();

// ---------------------------------------------------------------------------------------------------------

describe('guests (spec Authorization 4, 5, 7)', () => {
  it('Authorization 4: a guest is refused every mutation whole before execution (401, graphql-response+json, no data, WWW-Authenticate) and every REST route with 401', async () => {
    const doc = idOf(ROADMAP);
    const operations: [string, Record<string, unknown>][] = [
      [CREATE, { input: { organization: 'acme', title: 'Guest doc' } }],
      [UPDATE, { input: { id: doc, title: 'Guest edit' } }],
      [PUBLISH, { id: doc }],
      [ARCHIVE, { id: doc }],
      [DELETE, { id: doc }],
      [HOLD, { id: doc, hold: true }],
      [ROLE, { input: { organization: 'acme', userId: demo.userId.bob, role: 'OWNER' } }],
      [DOCUMENT, { id: doc }],
      [LIST, {}],
    ];
    const { events } = await denialsDuring(async () => {
      for (const [query, variables] of operations) expectGuestRefused(await gql('guest', query, variables));
      const routes: [string, string, unknown?][] = [
        ['GET', '/api/documents'],
        ['GET', `/api/documents/${doc}`],
        ['POST', '/api/documents', { organization: 'acme', title: 'Guest doc' }],
        ['PATCH', `/api/documents/${doc}`, { title: 'Guest edit' }],
        ['PUT', `/api/documents/${doc}`, { title: 'Guest edit' }],
        ['DELETE', `/api/documents/${doc}`],
        ['POST', `/api/documents/${doc}/publish`],
        ['POST', `/api/documents/${doc}/archive`],
      ];
      for (const [method, path, body] of routes) {
        const res = await rest('guest', method, path, body);
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
        expect(res.json).toEqual({ statusCode: 401, message: 'Sign in to perform this operation.', error: 'Unauthorized' });
      }
    });
    // Refused at the route, before any named ability ran: nothing to publish, nothing changed.
    expect(events).toEqual([]);
    expect(await rowOf(ROADMAP)).toMatchObject({ title: ROADMAP, status: 'DRAFT', legalHold: false });
    expect(await service.database.db.select().from(documents)).toHaveLength(7);
    expect(await roleOf('bob', (await rowOf(QUARTERLY))!.organizationId)).toBe('VIEWER');
  });

  it('Authorization 7: only @public fields are open to guests; a signed-in non-user subject reads viewer but is refused documents (no 5xx)', async () => {
    const open = await gql('guest', '{ status { service version } }');
    expect(open.status).toBe(200);
    expect(open.json.data.status.service).toEqual(expect.any(String));
    // One non-public field in the selection refuses the whole operation.
    expectGuestRefused(await gql('guest', '{ status { service } viewer { subject } }'));
    expectGuestRefused(await gql('guest', '{ me { id } }'));
    expectGuestRefused(await gql('guest', '{ organization(slug: "acme") { slug } }'));

    // A valid token whose subject is no user: it is signed in, but it is nobody the policies know.
    const script = await service.token('script-user');
    const viewer = await postGraphQL(service.graphqlUrl, { query: '{ viewer { subject user { id } } me { id } }' }, { token: script });
    expect(viewer.status).toBe(200);
    expect(viewer.json).toEqual({ data: { viewer: { subject: 'script-user', user: null }, me: null } });

    const list = await postGraphQL(service.graphqlUrl, { query: LIST }, { token: script });
    expect(list.status).toBeLessThan(500);
    if (list.json.errors) {
      expect(list.json.data).toBeNull(); // documents is non-null: the refusal reaches the root
      expect(['UNAUTHENTICATED', 'FORBIDDEN']).toContain(list.json.errors[0].extensions.code);
      expect(list.json.errors[0].path).toEqual(['documents']);
    } else {
      expect(list.json.data.documents.edges).toEqual([]);
    }
    const restList = await callRest(service, 'GET', '/api/documents', { token: script });
    expect([200, 401, 403]).toContain(restList.status);
    if (restList.status === 200) expect(restList.json.data).toEqual([]);
    const one = await callRest(service, 'GET', `/api/documents/${idOf(QUARTERLY)}`, { token: script });
    expect([401, 403, 404]).toContain(one.status);
  });

  it('Authorization 5: a named ability that denies a caller the policies see as nobody answers 401 / UNAUTHENTICATED (signing in might change it)', async () => {
    const script = await service.token('script-user');
    const { result, events } = await denialsDuring(async () => ({
      graphql: await postGraphQL(service.graphqlUrl, { query: LIST }, { token: script }),
      rest: await callRest(service, 'GET', '/api/documents', { token: script }),
    }));
    expect(result.graphql.status).toBe(200);
    expect(result.graphql.json.data).toBeNull();
    expect(result.graphql.json.errors).toEqual([
      {
        message: MESSAGES.UNAUTHENTICATED,
        locations: [{ line: 2, column: 3 }],
        path: ['documents'],
        extensions: { code: 'UNAUTHENTICATED' },
      },
    ]);
    expectRestRefusal(result.rest, 'UNAUTHENTICATED');
    expect(result.rest.json).toEqual({ statusCode: 401, message: MESSAGES.UNAUTHENTICATED, error: 'Unauthorized' });
    // spec Events 2: a guest's denial carries user null.
    expect(events).toHaveLength(2);
    for (const [event, handler] of [
      [events[0]!, 'Query.documents'],
      [events[1]!, 'GET /api/documents'],
    ] as const) {
      expect(event).toEqual({
        type: 'denied',
        policy: 'DocumentPolicy',
        ability: 'list',
        reason: 'unauthenticated',
        user: null,
        args: [],
        handler,
      });
    }
  });
});

describe('every mutation by guest, VIEWER, EDITOR, ADMIN/OWNER and super-admin (spec Authorization 1, 2, 4, 6, 7)', () => {
  it('Authorization 1, 2: createDocument — VIEWER 403, EDITOR/OWNER/super-admin create, another tenant 404 like a missing organization', async () => {
    // bob (VIEWER): refused at the route (@auth EDITOR) in GraphQL, by DocumentPolicy.create in REST.
    expectSameRefusal(
      await gql('bob', CREATE, { input: { organization: 'acme', title: 'By bob' } }),
      'createDocument',
      await rest('bob', 'POST', '/api/documents', { organization: 'acme', title: 'By bob' }),
      'FORBIDDEN',
    );
    // erin (EDITOR of acme) into globex, carol (ADMIN of globex) into acme: exactly like an unknown organization.
    for (const [who, slug] of [
      ['erin', 'globex'],
      ['carol', 'acme'],
    ] as const) {
      const foreign = await gql(who, CREATE, { input: { organization: slug, title: 'Sneaky' } });
      const missing = await gql(who, CREATE, { input: { organization: 'no-such-org', title: 'Sneaky' } });
      expectGraphQLRefusal(foreign, 'createDocument', 'NOT_FOUND');
      expect(foreign.json).toEqual(missing.json);
      const foreignRest = await rest(who, 'POST', '/api/documents', { organization: slug, title: 'Sneaky' });
      const missingRest = await rest(who, 'POST', '/api/documents', { organization: 'no-such-org', title: 'Sneaky' });
      expectRestRefusal(foreignRest, 'NOT_FOUND');
      expect(foreignRest.json).toEqual(missingRest.json);
    }
    // Allowed: EDITOR, OWNER in acme; ADMIN in globex; the super-admin anywhere (before hook).
    for (const [who, slug] of [
      ['erin', 'acme'],
      ['alice', 'acme'],
      ['carol', 'globex'],
      ['root', 'globex'],
    ] as const) {
      const created = await gql(who, CREATE, { input: { organization: slug, title: `GraphQL by ${who}` } });
      expect(created.json, who).toEqual({
        data: {
          createDocument: {
            document: {
              id: expect.any(String),
              title: `GraphQL by ${who}`,
              status: 'DRAFT',
              organization: { slug },
              owner: { id: demo.userId[who] },
            },
            userErrors: [],
          },
        },
      });
      const viaRest = await rest(who, 'POST', '/api/documents', { organization: slug, title: `REST by ${who}` });
      expect(viaRest.status, viaRest.text).toBe(201);
      expect(viaRest.json).toMatchObject({
        title: `REST by ${who}`,
        status: 'DRAFT',
        organization: { slug },
        owner: { id: demo.userId[who] },
      });
    }
    // A business failure is data (GraphQL) / 409 (REST), never an authorization error.
    expectUserError(
      await gql('erin', CREATE, { input: { organization: 'acme', title: QUARTERLY } }),
      'createDocument',
      await rest('erin', 'POST', '/api/documents', { organization: 'acme', title: QUARTERLY }),
      'TITLE_TAKEN',
    );
    expect(await service.database.db.select().from(documents)).toHaveLength(7 + 8);
  });

  it('Authorization 1, 6: updateDocument — VIEWER 403 even on a document he can read, EDITOR/OWNER/super-admin update, another tenant 404 like a missing id, archived is INVALID_STATE', async () => {
    const quarterly = idOf(QUARTERLY);
    expectSameRefusal(
      await gql('bob', UPDATE, { input: { id: quarterly, title: 'By bob' } }),
      'updateDocument',
      await rest('bob', 'PATCH', `/api/documents/${quarterly}`, { title: 'By bob' }),
      'FORBIDDEN',
    );
    expectRestRefusal(await rest('bob', 'PUT', `/api/documents/${quarterly}`, { title: 'By bob' }), 'FORBIDDEN');
    // The route check runs before the resolver: bob's answer is the same whatever the id (nothing is revealed).
    const bobHidden = await gql('bob', UPDATE, { input: { id: idOf(ROADMAP), title: 'By bob' } });
    const bobMissing = await gql('bob', UPDATE, { input: { id: randomUUID(), title: 'By bob' } });
    expectGraphQLRefusal(bobHidden, 'updateDocument', 'FORBIDDEN');
    expect(bobHidden.json).toEqual(bobMissing.json);
    const bobHiddenRest = await rest('bob', 'PATCH', `/api/documents/${idOf(ROADMAP)}`, { title: 'By bob' });
    expectRestRefusal(bobHiddenRest, 'FORBIDDEN');
    expect(bobHiddenRest.json).toEqual((await rest('bob', 'PATCH', `/api/documents/${randomUUID()}`, { title: 'By bob' })).json);

    // carol (ADMIN of globex passes the route check) on an acme document: NOT_FOUND, exactly like a random id.
    const foreign = await gql('carol', UPDATE, { input: { id: quarterly, title: 'By carol' } });
    const missing = await gql('carol', UPDATE, { input: { id: randomUUID(), title: 'By carol' } });
    expectGraphQLRefusal(foreign, 'updateDocument', 'NOT_FOUND');
    expect(foreign.json).toEqual(missing.json);
    const foreignRest = await rest('carol', 'PATCH', `/api/documents/${quarterly}`, { title: 'By carol' });
    const missingRest = await rest('carol', 'PATCH', `/api/documents/${randomUUID()}`, { title: 'By carol' });
    expectRestRefusal(foreignRest, 'NOT_FOUND');
    expect(foreignRest.json).toEqual(missingRest.json);
    expect((await rowOf(QUARTERLY))!.title).toBe(QUARTERLY);

    for (const who of ['erin', 'alice', 'root'] as const) {
      const graphql = await gql(who, UPDATE, { input: { id: quarterly, body: `GraphQL body by ${who}` } });
      expect(graphql.json, who).toEqual({
        data: { updateDocument: { document: { id: quarterly, title: QUARTERLY, body: `GraphQL body by ${who}` }, userErrors: [] } },
      });
      const viaRest = await rest(who, 'PATCH', `/api/documents/${quarterly}`, { body: `REST body by ${who}` });
      expect(viaRest.status, viaRest.text).toBe(200);
      expect(viaRest.json).toMatchObject({ id: quarterly, body: `REST body by ${who}` });
    }
    expectUserError(
      await gql('erin', UPDATE, { input: { id: idOf(PRICING), body: 'x' } }),
      'updateDocument',
      await rest('erin', 'PATCH', `/api/documents/${idOf(PRICING)}`, { body: 'x' }),
      'INVALID_STATE',
    );
  });

  it('Authorization 11: publishDocument — unverified EDITOR 403, FREE plan 403, VIEWER 403 / 404 on a draft, OWNER publishes, archived is INVALID_STATE', async () => {
    const roadmap = idOf(ROADMAP);
    // erin: unverified e-mail (refused at the route in GraphQL, by DocumentPolicy.publish in REST).
    expectSameRefusal(
      await gql('erin', PUBLISH, { id: roadmap }),
      'publishDocument',
      await rest('erin', 'POST', `/api/documents/${roadmap}/publish`),
      'FORBIDDEN',
    );
    // carol: ADMIN with a verified e-mail, but globex is on the FREE plan.
    const merger = idOf(MERGER);
    expectSameRefusal(
      await gql('carol', PUBLISH, { id: merger }),
      'publishDocument',
      await rest('carol', 'POST', `/api/documents/${merger}/publish`),
      'FORBIDDEN',
    );
    // bob: a VIEWER cannot publish what he sees, and a draft is hidden from him.
    const quarterly = idOf(QUARTERLY);
    expectSameRefusal(
      await gql('bob', PUBLISH, { id: quarterly }),
      'publishDocument',
      await rest('bob', 'POST', `/api/documents/${quarterly}/publish`),
      'FORBIDDEN',
    );
    expectSameRefusal(
      await gql('bob', PUBLISH, { id: roadmap }),
      'publishDocument',
      await rest('bob', 'POST', `/api/documents/${roadmap}/publish`),
      'NOT_FOUND',
    );
    // carol on an acme draft: like a missing id.
    const foreign = await gql('carol', PUBLISH, { id: roadmap });
    expectGraphQLRefusal(foreign, 'publishDocument', 'NOT_FOUND');
    expect(foreign.json).toEqual((await gql('carol', PUBLISH, { id: randomUUID() })).json);
    expect((await rowOf(ROADMAP))!.status).toBe('DRAFT');
    expect((await rowOf(MERGER))!.status).toBe('DRAFT');

    // alice: OWNER, verified, PRO organization.
    expect((await gql('alice', PUBLISH, { id: roadmap })).json).toEqual({
      data: { publishDocument: { document: { id: roadmap, status: 'PUBLISHED' }, userErrors: [] } },
    });
    await service.database.db.update(documents).set({ status: 'DRAFT' }).where(eq(documents.id, roadmap));
    const viaRest = await rest('alice', 'POST', `/api/documents/${roadmap}/publish`);
    expect(viaRest.status, viaRest.text).toBe(200);
    expect(viaRest.json).toMatchObject({ id: roadmap, status: 'PUBLISHED' });

    // Only drafts: an archived (or already published) document is a business failure, not an error.
    for (const title of [PRICING, QUARTERLY]) {
      const graphql = await gql('alice', PUBLISH, { id: idOf(title) });
      expect(graphql.json).toEqual({
        data: {
          publishDocument: {
            document: null,
            userErrors: [{ field: null, message: 'Only drafts can be published.', code: 'INVALID_STATE' }],
          },
        },
      });
      expectUserError(graphql, 'publishDocument', await rest('alice', 'POST', `/api/documents/${idOf(title)}/publish`), 'INVALID_STATE');
    }
    expect((await rowOf(PRICING))!.status).toBe('ARCHIVED');

    // The super-admin passes the before hook, FREE plan or not.
    expect((await gql('root', PUBLISH, { id: merger })).json.data.publishDocument).toEqual({
      document: { id: merger, status: 'PUBLISHED' },
      userErrors: [],
    });
  });

  it('Authorization 1, 6: archiveDocument — VIEWER 403, EDITOR/OWNER/super-admin archive, another tenant 404, already archived is INVALID_STATE', async () => {
    const quarterly = idOf(QUARTERLY);
    expectSameRefusal(
      await gql('bob', ARCHIVE, { id: quarterly }),
      'archiveDocument',
      await rest('bob', 'POST', `/api/documents/${quarterly}/archive`),
      'FORBIDDEN',
    );
    const foreign = await gql('carol', ARCHIVE, { id: quarterly });
    expectGraphQLRefusal(foreign, 'archiveDocument', 'NOT_FOUND');
    expect(foreign.json).toEqual((await gql('carol', ARCHIVE, { id: randomUUID() })).json);
    const foreignRest = await rest('carol', 'POST', `/api/documents/${quarterly}/archive`);
    expectRestRefusal(foreignRest, 'NOT_FOUND');
    expect(foreignRest.json).toEqual((await rest('carol', 'POST', `/api/documents/${randomUUID()}/archive`)).json);
    expect((await rowOf(QUARTERLY))!.status).toBe('PUBLISHED');

    const cases = [
      ['erin', ROADMAP, QUARTERLY],
      ['alice', LAUNCH, LITIGATION],
      ['root', HANDBOOK, MERGER],
    ] as const;
    for (const [who, viaGraphQL, viaRest] of cases) {
      expect((await gql(who, ARCHIVE, { id: idOf(viaGraphQL) })).json, who).toEqual({
        data: { archiveDocument: { document: { id: idOf(viaGraphQL), status: 'ARCHIVED' }, userErrors: [] } },
      });
      const res = await rest(who, 'POST', `/api/documents/${idOf(viaRest)}/archive`);
      expect(res.status, res.text).toBe(200);
      expect(res.json).toMatchObject({ id: idOf(viaRest), status: 'ARCHIVED' });
    }
    expectUserError(
      await gql('erin', ARCHIVE, { id: idOf(PRICING) }),
      'archiveDocument',
      await rest('erin', 'POST', `/api/documents/${idOf(PRICING)}/archive`),
      'INVALID_STATE',
    );
  });

  it('Authorization 1, 6, 8: deleteDocument — VIEWER 403, EDITOR only own, ADMIN/OWNER any, another tenant 404 like a missing id', async () => {
    const quarterly = idOf(QUARTERLY);
    expectSameRefusal(
      await gql('bob', DELETE, { id: quarterly }),
      'deleteDocument',
      await rest('bob', 'DELETE', `/api/documents/${quarterly}`),
      'FORBIDDEN',
    );
    // erin is an EDITOR: not alice's document ...
    expectSameRefusal(
      await gql('erin', DELETE, { id: quarterly }),
      'deleteDocument',
      await rest('erin', 'DELETE', `/api/documents/${quarterly}`),
      'FORBIDDEN',
    );
    // carol on acme: NOT_FOUND, byte for byte like a random id.
    const foreign = await gql('carol', DELETE, { id: quarterly });
    expectGraphQLRefusal(foreign, 'deleteDocument', 'NOT_FOUND');
    expect(foreign.json).toEqual((await gql('carol', DELETE, { id: randomUUID() })).json);
    const foreignRest = await rest('carol', 'DELETE', `/api/documents/${quarterly}`);
    expectRestRefusal(foreignRest, 'NOT_FOUND');
    expect(foreignRest.json).toEqual((await rest('carol', 'DELETE', `/api/documents/${randomUUID()}`)).json);
    expect(await rowOf(QUARTERLY)).toBeDefined();

    // ... but her own; the OWNER any; the super-admin anywhere.
    const cases = [
      ['erin', ROADMAP, PRICING],
      ['alice', QUARTERLY, LAUNCH],
      ['root', HANDBOOK, MERGER],
    ] as const;
    for (const [who, viaGraphQL, viaRest] of cases) {
      expect((await gql(who, DELETE, { id: idOf(viaGraphQL) })).json, who).toEqual({
        data: { deleteDocument: { deletedDocumentId: idOf(viaGraphQL), userErrors: [] } },
      });
      const res = await rest(who, 'DELETE', `/api/documents/${idOf(viaRest)}`);
      expect(res.status, res.text).toBe(204);
      expect(res.text).toBe('');
      expect(await rowOf(viaGraphQL)).toBeUndefined();
      expect(await rowOf(viaRest)).toBeUndefined();
    }
    // Deleted is missing: the next attempt is 404 on both surfaces.
    expectSameRefusal(
      await gql('alice', DELETE, { id: idOf(QUARTERLY) }),
      'deleteDocument',
      await rest('alice', 'DELETE', `/api/documents/${idOf(QUARTERLY)}`),
      'NOT_FOUND',
    );
  });

  it('Authorization 7, 8: setLegalHold — VIEWER and EDITOR 403 (route needs ADMIN), another tenant 404, OWNER and super-admin allowed; lifting the hold makes the memo deletable', async () => {
    const litigation = idOf(LITIGATION);
    for (const who of ['bob', 'erin'] as const) {
      const res = await gql(who, HOLD, { id: litigation, hold: false });
      expectGraphQLRefusal(res, 'setLegalHold', 'FORBIDDEN');
      // before the resolver: the same answer for a random id
      expect(res.json).toEqual((await gql(who, HOLD, { id: randomUUID(), hold: false })).json);
    }
    const foreign = await gql('carol', HOLD, { id: litigation, hold: false });
    expectGraphQLRefusal(foreign, 'setLegalHold', 'NOT_FOUND');
    expect(foreign.json).toEqual((await gql('carol', HOLD, { id: randomUUID(), hold: false })).json);
    expect((await rowOf(LITIGATION))!.legalHold).toBe(true);

    expect((await gql('carol', HOLD, { id: idOf(HANDBOOK), hold: true })).json).toEqual({
      data: { setLegalHold: { document: { id: idOf(HANDBOOK), legalHold: true }, userErrors: [] } },
    });
    expect((await gql('root', HOLD, { id: idOf(QUARTERLY), hold: true })).json).toEqual({
      data: { setLegalHold: { document: { id: idOf(QUARTERLY), legalHold: true }, userErrors: [] } },
    });
    // The hold, not the role, is what stops alice deleting the memo.
    expectGraphQLRefusal(await gql('alice', DELETE, { id: litigation }), 'deleteDocument', 'FORBIDDEN');
    expect((await gql('alice', HOLD, { id: litigation, hold: false })).json).toEqual({
      data: { setLegalHold: { document: { id: litigation, legalHold: false }, userErrors: [] } },
    });
    expect((await gql('alice', DELETE, { id: litigation })).json).toEqual({
      data: { deleteDocument: { deletedDocumentId: litigation, userErrors: [] } },
    });
  });

  it("Authorization 7: changeMemberRole — VIEWER/EDITOR 403, another tenant 404, never to or from a role above one's own, the last OWNER stays", async () => {
    const acme = (await rowOf(QUARTERLY))!.organizationId;
    const input = (userId: string, role: string, organization = 'acme') => ({ input: { organization, userId, role } });
    for (const who of ['bob', 'erin'] as const) {
      const res = await gql(who, ROLE, input(demo.userId[who], 'OWNER'));
      expectGraphQLRefusal(res, 'changeMemberRole', 'FORBIDDEN');
    }
    // carol (ADMIN of globex) on acme: exactly like an organization that does not exist.
    const foreign = await gql('carol', ROLE, input(demo.userId.bob, 'ADMIN'));
    expectGraphQLRefusal(foreign, 'changeMemberRole', 'NOT_FOUND');
    expect(foreign.json).toEqual((await gql('carol', ROLE, input(demo.userId.bob, 'ADMIN', 'no-such-org'))).json);
    // ... and someone who is not a member of her own organization: NOT_FOUND too.
    expectGraphQLRefusal(await gql('carol', ROLE, input(demo.userId.alice, 'VIEWER', 'globex')), 'changeMemberRole', 'NOT_FOUND');
    expect(await roleOf('bob', acme)).toBe('VIEWER');

    // alice (OWNER) makes bob an ADMIN; bob's existing token now carries the new role (read at decision time).
    expect((await gql('alice', ROLE, input(demo.userId.bob, 'ADMIN'))).json).toEqual({
      data: {
        changeMemberRole: { membership: { role: 'ADMIN', user: { id: demo.userId.bob }, organization: { slug: 'acme' } }, userErrors: [] },
      },
    });
    // An ADMIN may not make anyone an OWNER, nor touch an OWNER.
    expectGraphQLRefusal(await gql('bob', ROLE, input(demo.userId.erin, 'OWNER')), 'changeMemberRole', 'FORBIDDEN');
    expectGraphQLRefusal(await gql('bob', ROLE, input(demo.userId.alice, 'VIEWER')), 'changeMemberRole', 'FORBIDDEN');
    expectGraphQLRefusal(await gql('bob', ROLE, input(demo.userId.bob, 'OWNER')), 'changeMemberRole', 'FORBIDDEN');
    expect(await roleOf('erin', acme)).toBe('EDITOR');
    expect(await roleOf('alice', acme)).toBe('OWNER');
    expect(await roleOf('bob', acme)).toBe('ADMIN');
    // ... but may move roles up to his own.
    expect((await gql('bob', ROLE, input(demo.userId.erin, 'ADMIN'))).json.data.changeMemberRole).toMatchObject({
      membership: { role: 'ADMIN' },
      userErrors: [],
    });
    expect(await roleOf('erin', acme)).toBe('ADMIN');

    // Demoting the last OWNER is a business failure, reported as data.
    for (const who of ['alice', 'root'] as const) {
      const res = await gql(who, ROLE, input(demo.userId.alice, 'ADMIN'));
      expect(res.json).toEqual({
        data: {
          changeMemberRole: {
            membership: null,
            userErrors: [{ field: ['input', 'role'], message: 'The organization must keep at least one OWNER.', code: 'LAST_OWNER' }],
          },
        },
      });
    }
    expect(await roleOf('alice', acme)).toBe('OWNER');
    // The super-admin passes the before hook.
    expect((await gql('root', ROLE, input(demo.userId.bob, 'OWNER'))).json.data.changeMemberRole).toMatchObject({
      membership: { role: 'OWNER' },
      userErrors: [],
    });
  });
});

describe('record, field and environment rules', () => {
  it('Authorization 1: the route check runs before the resolver, from the caller alone (AccountPolicy.holdsRole, no record loaded)', async () => {
    const { result, events } = await denialsDuring(async () => ({
      graphql: await gql('bob', UPDATE, { input: { id: randomUUID(), title: 'x' } }),
      rest: await rest('bob', 'PATCH', `/api/documents/${randomUUID()}`, { title: 'x' }),
    }));
    expectSameRefusal(result.graphql, 'updateDocument', result.rest, 'FORBIDDEN');
    const bob = expect.objectContaining({ id: demo.userId.bob });
    expect(events).toEqual([
      {
        type: 'denied',
        policy: 'AccountPolicy',
        ability: 'holdsRole',
        reason: 'forbidden',
        user: bob,
        args: ['EDITOR'],
        handler: 'Mutation.updateDocument',
      },
      {
        type: 'denied',
        policy: 'AccountPolicy',
        ability: 'holdsRole',
        reason: 'forbidden',
        user: bob,
        args: ['EDITOR'],
        handler: 'PATCH /api/documents/:id',
      },
    ]);
  });

  it('Authorization 2: the record-level rule is the same code for REST and GraphQL (same ability, same record, different handler)', async () => {
    const quarterly = idOf(QUARTERLY);
    const { result, events } = await denialsDuring(async () => ({
      graphql: await gql('erin', DELETE, { id: quarterly }),
      rest: await rest('erin', 'DELETE', `/api/documents/${quarterly}`),
    }));
    expectSameRefusal(result.graphql, 'deleteDocument', result.rest, 'FORBIDDEN');
    expect(events.map((e) => [e.policy, e.ability, e.handler])).toEqual([
      ['DocumentPolicy', 'delete', 'Mutation.deleteDocument'],
      ['DocumentPolicy', 'delete', 'DELETE /api/documents/:id'],
    ]);
    for (const event of events) expect((event.args[0] as { id: string }).id).toBe(quarterly);
  });

  it('Authorization 3, 12, 13: User.email of a colleague is null with FORBIDDEN at its path (once per row) for a VIEWER, visible to the OWNER, own e-mail always', async () => {
    const query = '{ documents(first: 100) { edges { node { title owner { displayName email } } } } }';
    const bob = await gql('bob', query);
    expect(bob.status).toBe(200);
    const edges = bob.json.data.documents.edges as { node: { title: string; owner: { displayName: string; email: string | null } } }[];
    expect(edges.map((e) => e.node.title).sort()).toEqual([LITIGATION, QUARTERLY].sort());
    for (const { node } of edges) expect(node.owner).toEqual({ displayName: 'Alice', email: null });
    expect(bob.json.errors).toHaveLength(edges.length);
    const paths = (bob.json.errors as { path: (string | number)[] }[]).map((e) => e.path).sort((x, y) => Number(x[2]) - Number(y[2]));
    expect(paths).toEqual(edges.map((_, i) => ['documents', 'edges', i, 'node', 'owner', 'email']));
    for (const error of bob.json.errors) expect(error).toMatchObject({ message: MESSAGES.FORBIDDEN, extensions: { code: 'FORBIDDEN' } });
    expect(bob.text).not.toMatch(POLICY_NAMES);
    expect(bob.text).not.toContain('alice@acme.test');

    // alice is OWNER (ADMIN and above) of acme: her colleagues' e-mails are hers to see.
    const alice = await gql('alice', query);
    expect(alice.json.errors).toBeUndefined();
    const owners = new Map(
      (alice.json.data.documents.edges as { node: { owner: { displayName: string; email: string } } }[]).map((e) => [
        e.node.owner.displayName,
        e.node.owner.email,
      ]),
    );
    expect(Object.fromEntries(owners)).toEqual({ Alice: 'alice@acme.test', Erin: 'erin@acme.test' });

    // Everybody sees their own.
    for (const who of ['alice', 'bob', 'erin', 'carol', 'root'] as const) {
      const me = await gql(who, '{ me { email } }');
      expect(me.json, who).toEqual({
        data: {
          me: {
            email: (await service.database.db.select({ email: users.email }).from(users).where(eq(users.id, demo.userId[who])))[0]!.email,
          },
        },
      });
    }
    // Field level on documents too: internalNotes for the VIEWER is null + FORBIDDEN, the rest of the document intact.
    const notes = await gql('bob', `query ($id: ID!) { document(id: $id) { title internalNotes } }`, { id: idOf(QUARTERLY) });
    expect(notes.json.data).toEqual({ document: { title: QUARTERLY, internalNotes: null } });
    expect(notes.json.errors).toMatchObject([{ path: ['document', 'internalNotes'], extensions: { code: 'FORBIDDEN' } }]);
  });

  it('Authorization 4: no user -> 401, a known user without permission -> 403 (same operation, same record, both surfaces)', async () => {
    const quarterly = idOf(QUARTERLY);
    expectGuestRefused(await gql('guest', ARCHIVE, { id: quarterly }));
    expectRestRefusal(await rest('guest', 'POST', `/api/documents/${quarterly}/archive`), 'UNAUTHENTICATED');
    expectSameRefusal(
      await gql('bob', ARCHIVE, { id: quarterly }),
      'archiveDocument',
      await rest('bob', 'POST', `/api/documents/${quarterly}/archive`),
      'FORBIDDEN',
    );
  });

  it("Authorization 6: another tenant's document answers exactly like a missing one (read, update, delete; whole bodies compared)", async () => {
    const acmeDoc = idOf(QUARTERLY);
    const globexDoc = idOf(HANDBOOK);
    for (const [who, foreignId] of [
      ['carol', acmeDoc],
      ['alice', globexDoc],
      ['bob', globexDoc],
      ['erin', globexDoc],
    ] as const) {
      const missingId = randomUUID();
      const pairs: [string, Record<string, unknown>, Record<string, unknown>, string][] = [
        [DOCUMENT, { id: foreignId }, { id: missingId }, 'document'],
        [UPDATE, { input: { id: foreignId, title: 'x' } }, { input: { id: missingId, title: 'x' } }, 'updateDocument'],
        [DELETE, { id: foreignId }, { id: missingId }, 'deleteDocument'],
      ];
      for (const [query, foreignVars, missingVars, field] of pairs) {
        const foreign = await gql(who, query, foreignVars);
        const missing = await gql(who, query, missingVars);
        // A VIEWER is refused updateDocument/deleteDocument at the route, for every id alike; everyone else sees NOT_FOUND.
        const routeRefused = who === 'bob' && field !== 'document';
        expectGraphQLRefusal(foreign, field, routeRefused ? 'FORBIDDEN' : 'NOT_FOUND');
        expect(foreign.json, `${who} ${field}`).toEqual(missing.json);
      }
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { title: 'x' }],
        ['DELETE', undefined],
      ] as const) {
        const foreign = await rest(who, method, `/api/documents/${foreignId}`, body);
        const missing = await rest(who, method, `/api/documents/${missingId}`, body);
        // The REST routes carry the same route-level marks: bob's PATCH/DELETE are refused before any record is read.
        const routeRefused = who === 'bob' && method !== 'GET';
        expectRestRefusal(foreign, routeRefused ? 'FORBIDDEN' : 'NOT_FOUND');
        expect(foreign.json, `${who} ${method}`).toEqual(missing.json);
        if (!routeRefused)
          expect(foreign.json).toEqual({ statusCode: 404, message: MESSAGES.NOT_FOUND, error: 'Not Found', code: 'NOT_FOUND' });
      }
    }
    // Nothing was changed.
    expect((await rowOf(QUARTERLY))!.title).toBe(QUARTERLY);
    expect((await rowOf(HANDBOOK))!.title).toBe(HANDBOOK);
    // Organizations alike.
    const org = '{ organization(slug: "acme") { slug } }';
    expect((await gql('carol', org)).json).toEqual({ ...(await gql('carol', '{ organization(slug: "nope") { slug } }')).json });
  });

  it('Authorization 7: a role grants itself and every role below it (OWNER passes @auth(role: ADMIN) and EDITOR; ADMIN passes EDITOR)', async () => {
    // alice holds only OWNER, carol only ADMIN: both pass the EDITOR and ADMIN route checks.
    expect((await gql('alice', HOLD, { id: idOf(QUARTERLY), hold: true })).json.data.setLegalHold.document.legalHold).toBe(true);
    expect(
      (await gql('alice', UPDATE, { input: { id: idOf(QUARTERLY), body: 'by the OWNER' } })).json.data.updateDocument.userErrors,
    ).toEqual([]);
    expect(
      (await gql('carol', UPDATE, { input: { id: idOf(HANDBOOK), body: 'by the ADMIN' } })).json.data.updateDocument.userErrors,
    ).toEqual([]);
    expect((await gql('carol', HOLD, { id: idOf(HANDBOOK), hold: true })).json.data.setLegalHold.document.legalHold).toBe(true);
    // erin (EDITOR) does not reach ADMIN; bob (VIEWER) does not reach EDITOR.
    expectGraphQLRefusal(await gql('erin', HOLD, { id: idOf(QUARTERLY), hold: false }), 'setLegalHold', 'FORBIDDEN');
    expectGraphQLRefusal(await gql('bob', ARCHIVE, { id: idOf(QUARTERLY) }), 'archiveDocument', 'FORBIDDEN');
  });

  it('Authorization 8: legal hold is binding — the super-admin\'s delete of "Litigation memo" is FORBIDDEN / 403 and the row stays', async () => {
    const litigation = idOf(LITIGATION);
    const { result, events } = await denialsDuring(async () => ({
      graphql: await gql('root', DELETE, { id: litigation }),
      rest: await rest('root', 'DELETE', `/api/documents/${litigation}`),
    }));
    expectSameRefusal(result.graphql, 'deleteDocument', result.rest, 'FORBIDDEN');
    expect(result.rest.json).toEqual({ statusCode: 403, message: MESSAGES.FORBIDDEN, error: 'Forbidden' });
    expect(events.map((e) => `${e.policy}.${e.ability}`)).toEqual(['DocumentPolicy.delete', 'DocumentPolicy.delete']);
    expect(await rowOf(LITIGATION)).toMatchObject({ id: litigation, legalHold: true });
    // The OWNER neither; and viewerCan agrees for both.
    expectSameRefusal(
      await gql('alice', DELETE, { id: litigation }),
      'deleteDocument',
      await rest('alice', 'DELETE', `/api/documents/${litigation}`),
      'FORBIDDEN',
    );
    for (const who of ['root', 'alice'] as const) {
      expect((await gql(who, DOCUMENT_CAN, { id: litigation })).json.data.document.viewerCan.delete).toBe(false);
      expect((await rest(who, 'GET', `/api/documents/${litigation}`)).json.viewerCan.delete).toBe(false);
    }
    expect(await rowOf(LITIGATION)).toBeDefined();
  });

  it('Authorization 8: a suspended user with a still-valid token is refused everything (before hook), GraphQL FORBIDDEN / REST 403', async () => {
    // alice's token was minted in beforeEach, before the suspension: it stays valid.
    await service.database.db.update(users).set({ suspended: true }).where(eq(users.id, demo.userId.alice));
    try {
      const roadmap = idOf(ROADMAP);
      const me = await gql('alice', '{ me { email } }');
      expectGraphQLRefusal(me, 'me', 'FORBIDDEN');
      const list = await gql('alice', LIST);
      expect(list.json.data).toBeNull();
      expect(list.json.errors).toMatchObject([{ path: ['documents'], extensions: { code: 'FORBIDDEN' } }]);
      expectRestRefusal(await rest('alice', 'GET', '/api/documents'), 'FORBIDDEN');
      // Every mutation, even those an unsuspended OWNER passes.
      for (const [query, variables, field] of [
        [CREATE, { input: { organization: 'acme', title: 'Suspended' } }, 'createDocument'],
        [UPDATE, { input: { id: roadmap, title: 'Suspended' } }, 'updateDocument'],
        [PUBLISH, { id: roadmap }, 'publishDocument'],
        [ARCHIVE, { id: roadmap }, 'archiveDocument'],
        [DELETE, { id: roadmap }, 'deleteDocument'],
        [HOLD, { id: roadmap, hold: true }, 'setLegalHold'],
        [ROLE, { input: { organization: 'acme', userId: demo.userId.bob, role: 'ADMIN' } }, 'changeMemberRole'],
      ] as const) {
        expectGraphQLRefusal(await gql('alice', query, variables), field, 'FORBIDDEN');
      }
      // REST: reading one record is hidden (404, as for a missing id); every change is refused at the route (403).
      expectRestRefusal(await rest('alice', 'GET', `/api/documents/${roadmap}`), 'NOT_FOUND');
      for (const [method, path, body] of [
        ['POST', '/api/documents', { organization: 'acme', title: 'Suspended' }],
        ['PATCH', `/api/documents/${roadmap}`, { title: 'Suspended' }],
        ['POST', `/api/documents/${roadmap}/publish`],
        ['POST', `/api/documents/${roadmap}/archive`],
        ['DELETE', `/api/documents/${roadmap}`],
      ] as const) {
        const res = await rest('alice', method, path, body);
        expect(res.status, `${method} ${path}`).toBe(403);
        expectRestRefusal(res, 'FORBIDDEN');
      }
      expect(await rowOf(ROADMAP)).toMatchObject({ title: ROADMAP, status: 'DRAFT', legalHold: false });
      expect(await service.database.db.select().from(documents)).toHaveLength(7);
    } finally {
      await service.database.db.update(users).set({ suspended: false }).where(eq(users.id, demo.userId.alice));
    }
    // Restored: the same token works again.
    expect((await gql('alice', '{ me { email } }')).json).toEqual({ data: { me: { email: 'alice@acme.test' } } });
  });

  it('Authorization 8: a suspended user cannot read their account through viewer.user either (me refuses it with FORBIDDEN)', async () => {
    await service.database.db.update(users).set({ suspended: true }).where(eq(users.id, demo.userId.alice));
    try {
      expectGraphQLRefusal(await gql('alice', '{ me { displayName } }'), 'me', 'FORBIDDEN');
      // The token's own claims may still be echoed; the account (name, roles, organizations) may not.
      const viewer = await gql('alice', '{ viewer { subject user { displayName memberships { role organization { slug name plan } } } } }');
      expect(viewer.status).toBeLessThan(500);
      expect(JSON.stringify(viewer.json.data ?? null)).not.toMatch(/Alice|OWNER|acme|Acme|PRO/);
      expect((viewer.json.errors ?? []).map((e: { extensions: { code: string } }) => e.extensions.code)).toContain('FORBIDDEN');
    } finally {
      await service.database.db.update(users).set({ suspended: false }).where(eq(users.id, demo.userId.alice));
    }
  });

  it('Authorization 9, 11: abilities are singletons fed per-request state — the time of the decision is an argument (DocumentPolicy.view sees the record and "now")', async () => {
    const before = Date.now();
    const { result, events } = await denialsDuring(() => gql('bob', DOCUMENT, { id: idOf(LAUNCH) }));
    expectGraphQLRefusal(result, 'document', 'NOT_FOUND');
    expect(events).toHaveLength(1);
    const [doc, now] = events[0]!.args as [{ id: string }, Date];
    expect(events[0]).toMatchObject({ policy: 'DocumentPolicy', ability: 'view', reason: 'forbidden', handler: 'Query.document' });
    expect(doc.id).toBe(idOf(LAUNCH));
    expect(now).toBeInstanceOf(Date);
    expect(now.getTime()).toBeGreaterThanOrEqual(before);
    expect(now.getTime()).toBeLessThanOrEqual(Date.now());
  });

  it('Authorization 10: viewerCan answers with the abilities the endpoints use, in GraphQL and REST alike, and publishes nothing', async () => {
    const { events } = await denialsDuring(async () => {
      for (const who of ['alice', 'bob', 'erin', 'carol', 'root'] as const) {
        for (const title of [...ACME_TITLES, ...GLOBEX_TITLES]) {
          const graphql = await gql(who, DOCUMENT_CAN, { id: idOf(title) });
          const viaRest = await rest(who, 'GET', `/api/documents/${idOf(title)}`);
          if (graphql.json.data.document === null) {
            expectSameRefusal(graphql, 'document', viaRest, 'NOT_FOUND');
            continue;
          }
          expect(viaRest.status).toBe(200);
          expect(viaRest.json.viewerCan, `${who} ${title}`).toEqual(graphql.json.data.document.viewerCan);
        }
      }
    });
    // The only events are the hidden documents' view denials: no `can` check published anything.
    expect(events.every((e) => e.ability === 'view')).toBe(true);
    const { events: none } = await denialsDuring(async () => {
      await gql('bob', DOCUMENT_CAN, { id: idOf(QUARTERLY) });
      await rest('bob', 'GET', `/api/documents/${idOf(QUARTERLY)}`);
      await gql('erin', DOCUMENT_CAN, { id: idOf(ROADMAP) });
      await rest('root', 'GET', `/api/documents/${idOf(LITIGATION)}`);
      await rest('bob', 'GET', '/api/documents');
    });
    expect(none).toEqual([]);
    // ... and the endpoints agree with what viewerCan said.
    expect((await gql('erin', DOCUMENT_CAN, { id: idOf(ROADMAP) })).json.data.document.viewerCan).toEqual({
      update: true,
      publish: false,
      archive: true,
      delete: true,
      setLegalHold: false,
    });
    expectGraphQLRefusal(await gql('erin', PUBLISH, { id: idOf(ROADMAP) }), 'publishDocument', 'FORBIDDEN');
    expectGraphQLRefusal(await gql('erin', HOLD, { id: idOf(ROADMAP), hold: true }), 'setLegalHold', 'FORBIDDEN');
    expect((await gql('erin', ARCHIVE, { id: idOf(ROADMAP) })).json.data.archiveDocument.userErrors).toEqual([]);
    expect((await gql('alice', DOCUMENT_CAN, { id: idOf(QUARTERLY) })).json.data.document.viewerCan.publish).toBe(true);
  });

  it('Authorization 11: the embargo is honoured by time — hidden from the VIEWER until the instant passes, visible to the EDITOR throughout', async () => {
    const quarterly = idOf(QUARTERLY);
    const until = new Date(Date.now() + 4000);
    await service.database.db.update(documents).set({ embargoUntil: until }).where(eq(documents.id, quarterly));

    expectSameRefusal(
      await gql('bob', DOCUMENT, { id: quarterly }),
      'document',
      await rest('bob', 'GET', `/api/documents/${quarterly}`),
      'NOT_FOUND',
    );
    expect(titlesOf(await gql('bob', LIST))).toEqual([LITIGATION]);
    expect(restTitlesOf(await rest('bob', 'GET', '/api/documents'))).toEqual([LITIGATION]);
    expect((await gql('erin', DOCUMENT, { id: quarterly })).json.data.document.title).toBe(QUARTERLY);
    expect((await rest('erin', 'GET', `/api/documents/${quarterly}`)).json.embargoUntil).toBe(until.toISOString());

    const wait = until.getTime() - Date.now() + 50;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    expect((await gql('bob', DOCUMENT, { id: quarterly })).json).toEqual({
      data: { document: { id: quarterly, title: QUARTERLY, status: 'PUBLISHED' } },
    });
    expect((await rest('bob', 'GET', `/api/documents/${quarterly}`)).status).toBe(200);
    expect(titlesOf(await gql('bob', LIST))).toEqual([LITIGATION, QUARTERLY].sort());
    expect(restTitlesOf(await rest('bob', 'GET', '/api/documents'))).toEqual([LITIGATION, QUARTERLY].sort());
  });

  it('Authorization 14: answers to a signed-in caller are private, no-store with Vary: Authorization (/graphql and /api/documents)', async () => {
    const responses = [
      await gql('bob', LIST),
      await gql('bob', DELETE, { id: idOf(QUARTERLY) }),
      await rest('bob', 'GET', '/api/documents'),
      await rest('bob', 'GET', `/api/documents/${idOf(QUARTERLY)}`),
      await rest('bob', 'GET', `/api/documents/${idOf(ROADMAP)}`), // 404
      await rest('bob', 'DELETE', `/api/documents/${idOf(QUARTERLY)}`), // 403
    ];
    for (const res of responses)
      expect(res.headers.get('vary') ?? '', `${res.status} ${res.text.slice(0, 80)}`).toMatch(/\bAuthorization\b/i);
    for (const res of responses)
      expect(res.headers.get('cache-control'), `${res.status} ${res.text.slice(0, 80)}`).toBe('private, no-store');
    // Guests' answers are not stored either.
    expect((await gql('guest', '{ status { service } }')).headers.get('cache-control')).toMatch(/no-store/);
    expect((await rest('guest', 'GET', '/api/documents')).headers.get('cache-control')).toMatch(/no-store/);
  });

  it('Authorization 15: lists are filtered inside the SQL statement (bob: published and not embargoed; carol: globex; root: all)', async () => {
    const expected: Record<Persona, string[]> = {
      bob: [QUARTERLY, LITIGATION],
      erin: ACME_TITLES,
      alice: ACME_TITLES,
      carol: GLOBEX_TITLES,
      root: [...ACME_TITLES, ...GLOBEX_TITLES],
    };
    for (const [who, titles] of Object.entries(expected) as [Persona, string[]][]) {
      const { result, statements } = await statementsDuring(() => gql(who, LIST));
      expect(titlesOf(result), who).toEqual([...titles].sort());
      expect(restTitlesOf(await rest(who, 'GET', '/api/documents')), who).toEqual([...titles].sort());
      const listing = statements.filter((s) => /from "documents"/i.test(s));
      expect(listing, who).toHaveLength(1);
      expect(listing[0]).toMatch(/limit/i);
      if (who === 'bob') expect(listing[0]).toMatch(/'PUBLISHED'/);
    }
    // Paging walks the filtered set: bob's first page of one has exactly one more after it.
    const first = await gql('bob', LIST, { first: 1 });
    expect(first.json.data.documents.pageInfo.hasNextPage).toBe(true);
    const second = await gql('bob', LIST, { first: 1, after: first.json.data.documents.pageInfo.endCursor });
    expect(second.json.data.documents.pageInfo.hasNextPage).toBe(false);
    expect([...titlesOf(first), ...titlesOf(second)].sort()).toEqual([LITIGATION, QUARTERLY].sort());
  });
});

describe('denial events (spec Events 2, 3)', () => {
  it('Events 2: a denial is published on the diagnostics channel and the observable stream with exactly type, policy, ability, reason, user, args, handler', async () => {
    const quarterly = idOf(QUARTERLY);
    const streamed: DenialEvent[] = [];
    const stop = onDenied((event) => streamed.push(event));
    let events: DenialEvent[];
    try {
      ({ events } = await denialsDuring(async () => {
        await gql('erin', DELETE, { id: quarterly });
        await rest('erin', 'DELETE', `/api/documents/${quarterly}`);
      }));
    } finally {
      stop();
    }
    expect(events).toHaveLength(2);
    expect(streamed).toEqual(events);
    for (const [event, handler] of [
      [events[0]!, 'Mutation.deleteDocument'],
      [events[1]!, 'DELETE /api/documents/:id'],
    ] as const) {
      expect(Object.keys(event).sort()).toEqual(['ability', 'args', 'handler', 'policy', 'reason', 'type', 'user']);
      expect(event).toMatchObject({ type: 'denied', policy: 'DocumentPolicy', ability: 'delete', reason: 'forbidden', handler });
      expect(event.user).toMatchObject({ id: demo.userId.erin, superAdmin: false, suspended: false, emailVerified: false });
      expect(Array.isArray(event.args)).toBe(true);
      expect(event.args).toHaveLength(1);
      expect(event.args[0]).toMatchObject({
        id: quarterly,
        title: QUARTERLY,
        ownerId: demo.userId.alice,
        legalHold: false,
        status: 'PUBLISHED',
      });
    }
  });

  it('Events 2: a check that merely answers false (viewerCan) publishes nothing', async () => {
    const { result, events } = await denialsDuring(async () => ({
      graphql: await gql('bob', DOCUMENT_CAN, { id: idOf(QUARTERLY) }),
      rest: await rest('bob', 'GET', `/api/documents/${idOf(QUARTERLY)}`),
    }));
    const none = { update: false, publish: false, archive: false, delete: false, setLegalHold: false };
    expect(result.graphql.json).toEqual({ data: { document: { id: idOf(QUARTERLY), title: QUARTERLY, viewerCan: none } } });
    expect(result.rest.json.viewerCan).toEqual(none);
    expect(events).toEqual([]);
  });

  it('Events 3: responses never name the policy or the ability (GraphQL errors carry only a code; REST bodies only statusCode, message, error)', async () => {
    const litigation = idOf(LITIGATION);
    const { result, events } = await denialsDuring(async () => [
      await gql('root', DELETE, { id: litigation }),
      await gql('bob', UPDATE, { input: { id: litigation, title: 'x' } }),
      await gql('erin', PUBLISH, { id: idOf(ROADMAP) }),
      await gql('carol', PUBLISH, { id: idOf(MERGER) }),
      await gql('bob', '{ documents { edges { node { internalNotes owner { email } } } } }'),
      await gql('bob', '{ me { memberships { organization { billingEmail } } } }'),
      await gql('carol', DOCUMENT, { id: litigation }),
      await rest('root', 'DELETE', `/api/documents/${litigation}`),
      await rest('erin', 'POST', `/api/documents/${idOf(ROADMAP)}/publish`),
      await rest('bob', 'PATCH', `/api/documents/${litigation}`, { title: 'x' }),
      await rest('carol', 'GET', `/api/documents/${litigation}`),
    ]);
    // The events name them (so the test is not vacuous) ...
    const named = new Set(events.flatMap((e) => [e.policy, e.ability]));
    for (const name of [
      'DocumentPolicy',
      'AccountPolicy',
      'OrganizationPolicy',
      'delete',
      'holdsRole',
      'publish',
      'viewInternalNotes',
      'viewEmail',
      'viewBilling',
      'view',
    ]) {
      expect(named, name).toContain(name);
    }
    // ... the responses never do.
    for (const res of result) {
      expect(res.text).not.toMatch(POLICY_NAMES);
      expect(res.text).not.toMatch(/"(policy|ability|reason)"/);
      expect(res.text).not.toMatch(/\bat .*\.(ts|js):\d+/); // no stack trace
      if (res.headers.get('content-type')?.includes('graphql-response+json')) {
        for (const error of res.json.errors) expect(Object.keys(error.extensions)).toEqual(['code']);
      } else {
        expect(res.json).toMatchObject({ statusCode: res.status, message: expect.any(String), error: expect.any(String) });
        expect(Object.keys(res.json).filter((key) => !['statusCode', 'message', 'error', 'code'].includes(key))).toEqual([]);
      }
    }
  });
});
