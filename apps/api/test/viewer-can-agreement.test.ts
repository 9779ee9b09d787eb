import { randomUUID } from 'node:crypto';
import { documents, organizations } from '@latchkey/db';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callRest, demoOf, PERSONAS, reseed, STEPPED_UP, type Demo, type Persona } from './support/demo.js';
import { postGraphQL, startTestService, type TestService } from './support/service.js';

/**
 * Spec Authorization 10 and 15: the yes/no answers a client is shown (`viewerCan`) and the lists it is given
 * must agree with what the real entry points (GraphQL mutations, REST routes, `document(id)`) then do.
 * `viewerCan` answers the ability alone, so the mutations are called with tokens that meet every step-up
 * (`STEPPED_UP`, spec Multi-factor rules 6); what a weaker token gets is proved in step-up-graphql.test.ts.
 */

const PERSONA_NAMES = Object.keys(PERSONAS) as Persona[];
const TITLES = [
  'Quarterly plan',
  'Draft roadmap',
  'Litigation memo',
  'Launch announcement',
  'Old pricing',
  'Globex handbook',
  'Globex merger draft',
] as const;
const ACTIONS = ['update', 'publish', 'archive', 'delete', 'setLegalHold'] as const;
type Action = (typeof ACTIONS)[number];

const MUTATIONS: Record<Action, { field: string; query: string; variables: (id: string) => Record<string, unknown> }> = {
  update: {
    field: 'updateDocument',
    query: 'mutation ($id: ID!) { updateDocument(input: { id: $id, body: "x" }) { document { id } userErrors { code } } }',
    variables: (id) => ({ id }),
  },
  publish: {
    field: 'publishDocument',
    query: 'mutation ($id: ID!) { publishDocument(id: $id) { document { id } userErrors { code } } }',
    variables: (id) => ({ id }),
  },
  archive: {
    field: 'archiveDocument',
    query: 'mutation ($id: ID!) { archiveDocument(id: $id) { document { id } userErrors { code } } }',
    variables: (id) => ({ id }),
  },
  delete: {
    field: 'deleteDocument',
    query: 'mutation ($id: ID!) { deleteDocument(id: $id) { deletedDocumentId userErrors { code } } }',
    variables: (id) => ({ id }),
  },
  setLegalHold: {
    field: 'setLegalHold',
    query: 'mutation ($id: ID!) { setLegalHold(id: $id, legalHold: true) { document { id } userErrors { code } } }',
    variables: (id) => ({ id }),
  },
};

/** The REST twin of each action. */
const REST: Partial<Record<Action, (id: string) => { method: string; path: string; body?: unknown }>> = {
  update: (id) => ({ method: 'PATCH', path: `/api/documents/${id}`, body: { body: 'y' } }),
  publish: (id) => ({ method: 'POST', path: `/api/documents/${id}/publish` }),
  archive: (id) => ({ method: 'POST', path: `/api/documents/${id}/archive` }),
  delete: (id) => ({ method: 'DELETE', path: `/api/documents/${id}` }),
  setLegalHold: (id) => ({ method: 'POST', path: `/api/documents/${id}/legal-hold`, body: { legalHold: true } }),
};

const VIEWER_CAN = `query ($id: ID!) { document(id: $id) { id viewerCan { update publish archive delete setLegalHold } } }`;

/**
 * 'allowed' when the ability let the call through. Business failures reported as userErrors (INVALID_STATE:
 * publishing an archived or already published document, archiving an archived one, editing an archived one)
 * come after the ability allowed the change, so they count as allowed. Otherwise the error code.
 */
type Outcome = 'allowed' | string;

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

async function graphql(token: string, query: string, variables: Record<string, unknown> = {}) {
  const res = await postGraphQL(service.graphqlUrl, { query, variables }, { token });
  return res.json as {
    data?: Record<string, any> | null;
    errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string } }[];
  };
}

async function mutationOutcome(token: string, action: Action, id: string): Promise<Outcome> {
  const { field, query, variables } = MUTATIONS[action];
  const json = await graphql(token, query, variables(id));
  const error = json.errors?.[0];
  if (error) return error.extensions?.code ?? `error without code: ${error.message}`;
  const payload = json.data?.[field] as { userErrors: { code: string }[] } | null | undefined;
  if (!payload) return 'null payload without error';
  const unexpected = payload.userErrors.filter(({ code }) => code !== 'INVALID_STATE');
  return unexpected.length === 0 ? 'allowed' : `userErrors ${unexpected.map(({ code }) => code).join(',')}`;
}

async function restOutcome(token: string, action: Action, id: string): Promise<Outcome> {
  const call = REST[action]!(id);
  const res = await callRest(service, call.method, call.path, { token, body: call.body });
  if (res.status === 200 || res.status === 204) return 'allowed';
  if (res.status === 409 && res.json?.code === 'INVALID_STATE') return 'allowed'; // business failure after the ability allowed
  if (res.status === 401) return 'UNAUTHENTICATED';
  if (res.status === 403) return 'FORBIDDEN';
  if (res.status === 404) return 'NOT_FOUND';
  return `HTTP ${res.status} ${res.text.slice(0, 120)}`;
}

/** viewerCan through GraphQL, or 'NOT_FOUND' when the persona cannot see the document. */
async function graphqlViewerCan(token: string, id: string): Promise<Record<Action, boolean> | string> {
  const json = await graphql(token, VIEWER_CAN, { id });
  if (json.data?.['document']) return json.data['document'].viewerCan as Record<Action, boolean>;
  return json.errors?.[0]?.extensions?.code ?? 'null document without error';
}

async function restViewerCan(token: string, id: string): Promise<Record<Action, boolean> | string> {
  const res = await callRest(service, 'GET', `/api/documents/${id}`, { token });
  if (res.status === 200) return res.json.viewerCan as Record<Action, boolean>;
  return res.status === 404 ? 'NOT_FOUND' : `HTTP ${res.status}`;
}

describe('viewerCan, lists and pagination agree with the real entry points', () => {
  it('Authorization 10: viewerCan agrees with the real mutation outcome for every user x document of the seed', async () => {
    const actual: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};

    for (const persona of PERSONA_NAMES) {
      for (const action of ACTIONS) {
        // One fresh seed per (persona, action): a mutation on one document never changes the ability on another,
        // and every viewerCan of the round is read before any mutation runs.
        await reseed(service.database);
        let demo: Demo = await demoOf(service);
        const token = await demo.token(persona, STEPPED_UP);
        const abilities = new Map<string, Record<Action, boolean> | string>();
        for (const title of TITLES) {
          const id = demo.documentId.get(title)!;
          const fromGraphql = await graphqlViewerCan(token, id);
          abilities.set(title, fromGraphql);
          if (action === 'update') {
            // once per persona and document: the REST representation carries the same yes/no answers
            actual[`${persona} | GET /api/documents/:id viewerCan | ${title}`] = await restViewerCan(token, id);
            expected[`${persona} | GET /api/documents/:id viewerCan | ${title}`] = fromGraphql;
          }
        }

        // A document the persona cannot see must answer exactly like a missing one (spec Authorization 6):
        // NOT_FOUND from the record check, or the route-level refusal (@auth/@can, decided from the caller
        // alone, before the resolver) that a missing id gets too.
        const missing = await mutationOutcome(token, action, randomUUID());
        actual[`${persona} | ${MUTATIONS[action].field} | <missing id>`] = missing;
        expected[`${persona} | ${MUTATIONS[action].field} | <missing id>`] = missing === 'FORBIDDEN' ? 'FORBIDDEN' : 'NOT_FOUND';

        const graphqlOutcomes = new Map<string, Outcome>();
        for (const title of TITLES) {
          const key = `${persona} | ${MUTATIONS[action].field} | ${title}`;
          const can = abilities.get(title)!;
          const outcome = await mutationOutcome(token, action, demo.documentId.get(title)!);
          graphqlOutcomes.set(title, outcome);
          if (typeof can === 'string') {
            expected[key] = { viewerCan: 'NOT_FOUND', outcome: missing };
            actual[key] = { viewerCan: can, outcome };
          } else {
            // viewerCan.X === true  <=>  no FORBIDDEN / UNAUTHENTICATED / NOT_FOUND. A visible document refused
            // to a signed-in caller is FORBIDDEN (spec Authorization 4).
            expected[key] = { viewerCan: can[action], outcome: can[action] ? 'allowed' : 'FORBIDDEN' };
            actual[key] = { viewerCan: can[action], outcome };
          }
        }

        const rest = REST[action];
        if (!rest) continue;
        // REST on its own fresh seed (the GraphQL round may have deleted or changed the documents).
        await reseed(service.database);
        demo = await demoOf(service);
        const restToken = await demo.token(persona, STEPPED_UP);
        for (const title of TITLES) {
          const call = rest(':id');
          const key = `${persona} | ${call.method} ${call.path} | ${title}`;
          const outcome = await restOutcome(restToken, action, demo.documentId.get(title)!);
          actual[key] = outcome;
          // The REST route carries the same route-level marks as the mutation: identical outcomes, 403/404 for
          // FORBIDDEN/NOT_FOUND.
          expected[key] = graphqlOutcomes.get(title);
        }
      }
    }

    expect(actual).toEqual(expected);
  }, 120_000);

  it('Authorization 15: the SQL list filter and the record rule agree', async () => {
    await reseed(service.database);
    const demo = await demoOf(service);
    const seeded = await service.database.db
      .select({ id: documents.id, title: documents.title, status: documents.status, slug: organizations.slug })
      .from(documents)
      .innerJoin(organizations, eq(organizations.id, documents.organizationId));
    expect(seeded.map(({ title }) => title).sort()).toEqual([...TITLES].sort());

    const LIST = `query ($filter: DocumentFilter) { documents(filter: $filter, first: 100) { edges { node { id title } } pageInfo { hasNextPage } } }`;
    const filters: {
      name: string;
      filter: Record<string, unknown> | null;
      rest: string;
      keep: (row: (typeof seeded)[number]) => boolean;
    }[] = [
      { name: 'no filter', filter: null, rest: '', keep: () => true },
      { name: '{organization:"acme"}', filter: { organization: 'acme' }, rest: '&organization=acme', keep: (row) => row.slug === 'acme' },
      { name: '{status:[DRAFT]}', filter: { status: ['DRAFT'] }, rest: '&status=DRAFT', keep: (row) => row.status === 'DRAFT' },
    ];

    const actual: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    for (const persona of PERSONA_NAMES) {
      const token = await demo.token(persona);
      // the record rule, one document at a time
      const visible = new Set<string>();
      for (const row of seeded) {
        const json = await graphql(token, 'query ($id: ID!) { document(id: $id) { id } }', { id: row.id });
        if (json.data?.['document']) visible.add(row.id);
        else expect(json.errors?.[0]?.extensions?.code, `${persona} document(${row.title})`).toBe('NOT_FOUND');
      }
      for (const { name, filter, rest, keep } of filters) {
        const want = seeded.filter((row) => visible.has(row.id) && keep(row));
        const json = await graphql(token, LIST, { filter });
        const edges = (json.data?.['documents']?.edges ?? []) as { node: { id: string; title: string } }[];
        actual[`${persona} | documents ${name} | titles`] = json.errors ? json.errors : edges.map(({ node }) => node.title).sort();
        expected[`${persona} | documents ${name} | titles`] = want.map(({ title }) => title).sort();
        actual[`${persona} | documents ${name} | hasNextPage`] = json.data?.['documents']?.pageInfo.hasNextPage;
        expected[`${persona} | documents ${name} | hasNextPage`] = false;

        const res = await callRest(service, 'GET', `/api/documents?first=100${rest}`, { token });
        actual[`${persona} | GET /api/documents ${name} | ids`] =
          res.status === 200 ? (res.json.data as { id: string }[]).map(({ id }) => id).sort() : `HTTP ${res.status}`;
        expected[`${persona} | GET /api/documents ${name} | ids`] = want.map(({ id }) => id).sort();
      }
    }
    expect(actual).toEqual(expected);
  });

  it('Cursor pagination walks every visible document exactly once, newest first', async () => {
    await reseed(service.database);
    let demo = await demoOf(service);
    const PAGE = `query ($first: Int!, $after: String) {
      documents(first: $first, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
    }`;

    async function listAll(token: string): Promise<string[]> {
      const json = await graphql(token, PAGE, { first: 100, after: null });
      expect(json.errors).toBeUndefined();
      expect(json.data!['documents'].pageInfo.hasNextPage).toBe(false);
      return (json.data!['documents'].edges as { node: { id: string } }[]).map(({ node }) => node.id);
    }

    async function walkGraphql(token: string, first: number): Promise<string[]> {
      const seen: string[] = [];
      let after: string | null = null;
      for (let page = 0; page < 100; page++) {
        const json = await graphql(token, PAGE, { first, after });
        expect(json.errors).toBeUndefined();
        const { edges, pageInfo } = json.data!['documents'] as {
          edges: { cursor: string; node: { id: string } }[];
          pageInfo: { hasNextPage: boolean; startCursor: string | null; endCursor: string | null };
        };
        expect(edges.length).toBeLessThanOrEqual(first);
        if (pageInfo.hasNextPage) expect(edges.length).toBe(first);
        expect(pageInfo.startCursor).toBe(edges[0]?.cursor ?? null);
        expect(pageInfo.endCursor).toBe(edges.at(-1)?.cursor ?? null);
        seen.push(...edges.map(({ node }) => node.id));
        if (!pageInfo.hasNextPage) return seen;
        after = pageInfo.endCursor;
      }
      throw new Error('pagination did not end within 100 pages');
    }

    async function walkRest(token: string, first: number): Promise<string[]> {
      const seen: string[] = [];
      let after: string | null = null;
      for (let page = 0; page < 100; page++) {
        const res = await callRest(service, 'GET', `/api/documents?first=${first}${after ? `&after=${encodeURIComponent(after)}` : ''}`, {
          token,
        });
        expect(res.status).toBe(200);
        const { data, pageInfo } = res.json as { data: { id: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
        expect(data.length).toBeLessThanOrEqual(first);
        seen.push(...data.map(({ id }) => id));
        if (!pageInfo.hasNextPage) return seen;
        after = pageInfo.endCursor;
      }
      throw new Error('REST pagination did not end within 100 pages');
    }

    /** newest first: (created_at DESC, id DESC), read straight from the table */
    async function newestFirst(ids: string[]): Promise<string[]> {
      const rows = await service.database.db.select({ id: documents.id, createdAt: documents.createdAt }).from(documents);
      const position = new Map(rows.map((row) => [row.id, row]));
      return [...ids].sort((a, b) => {
        const x = position.get(a)!;
        const y = position.get(b)!;
        return y.createdAt.getTime() - x.createdAt.getTime() || (a < b ? 1 : a > b ? -1 : 0);
      });
    }

    const personas: Persona[] = ['alice', 'root', 'bob'];
    const actual: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    const check = async (stage: string, first: number) => {
      for (const persona of personas) {
        const token = await demo.token(persona);
        const all = await listAll(token);
        actual[`${stage} | ${persona} | first:100 is newest first`] = all;
        expected[`${stage} | ${persona} | first:100 is newest first`] = await newestFirst(all);
        actual[`${stage} | ${persona} | GraphQL first:${first} walk`] = await walkGraphql(token, first);
        expected[`${stage} | ${persona} | GraphQL first:${first} walk`] = all;
        actual[`${stage} | ${persona} | REST first=${first} walk`] = await walkRest(token, first);
        expected[`${stage} | ${persona} | REST first=${first} walk`] = all;
      }
    };

    await check('seed', 2);
    expect((expected['seed | root | GraphQL first:2 walk'] as string[]).length).toBe(7);
    expect((expected['seed | alice | GraphQL first:2 walk'] as string[]).length).toBe(5);

    // 30 more documents in one statement: they share one created_at (now() of the statement), so the order
    // among them is decided by id alone. Every other one is PUBLISHED so the VIEWER's filtered walk has ties too.
    demo = await demoOf(service);
    const [acme] = await service.database.db.select({ id: organizations.id }).from(organizations).where(eq(organizations.slug, 'acme'));
    await service.database.db.insert(documents).values(
      Array.from({ length: 30 }, (_, i) => ({
        organizationId: acme!.id,
        ownerId: demo.userId.alice,
        title: `Bulk ${String(i).padStart(2, '0')}`,
        body: 'bulk',
        status: i % 2 === 0 ? ('PUBLISHED' as const) : ('DRAFT' as const),
      })),
    );
    const stamps = await service.database.db
      .select({ title: documents.title, createdAt: sql<string>`${documents.createdAt}::text` })
      .from(documents);
    expect(stamps.length).toBe(37);
    // the ties are real: all 30 share one created_at, to the microsecond
    expect(new Set(stamps.filter(({ title }) => title.startsWith('Bulk ')).map(({ createdAt }) => createdAt)).size).toBe(1);

    await check('after 30 tied inserts', 7);
    expect((expected['after 30 tied inserts | root | GraphQL first:7 walk'] as string[]).length).toBe(37);
    expect((expected['after 30 tied inserts | alice | GraphQL first:7 walk'] as string[]).length).toBe(35);
    expect((expected['after 30 tied inserts | bob | GraphQL first:7 walk'] as string[]).length).toBe(17);
    for (const [key, ids] of Object.entries(actual))
      expect(new Set(ids as string[]).size, `${key} has duplicates`).toBe((ids as string[]).length);

    expect(actual).toEqual(expected);
  });
});
