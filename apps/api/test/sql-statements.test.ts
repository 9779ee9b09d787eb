import { DocumentDashboardDocument } from '@latchkey/client';
import { documents, eq, users } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoOf, reseed, type Demo } from './support/demo.js';
import { requestStatementsDuring } from './support/cost.js';
import { postGraphQL, startTestService, type TestService } from './support/service.js';

const PAGE = `query Page($first: Int!, $after: String) {
  documents(first: $first, after: $after) {
    edges {
      node {
        id title status internalNotes
        organization { slug plan billingEmail }
        owner { displayName email }
        viewerCan { update publish archive delete setLegalHold }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}`;

let service: TestService;
let demo: Demo;

beforeAll(async () => {
  service = await startTestService();
  await reseed(service.database);
  demo = await demoOf(service);
  // 40 more acme documents, owned by three different people, so a page of 20 has many owners to batch. They are
  // newer than the demo's, each a millisecond newer than the one before: in one insert they would share one
  // created_at, and the newest ten (the dashboard's recent list) would be a draw by id.
  const [acmeDocument] = await service.database.db.select().from(documents).limit(1);
  const owners = [demo.userId.alice, demo.userId.erin, demo.userId.bob];
  const start = acmeDocument!.createdAt.getTime() + 1;
  await service.database.db.insert(documents).values(
    Array.from({ length: 40 }, (_, i) => ({
      organizationId: acmeDocument!.organizationId,
      ownerId: owners[i % owners.length]!,
      title: `Bulk ${i}`,
      status: 'PUBLISHED' as const,
      createdAt: new Date(start + i),
    })),
  );
});
afterAll(() => service?.stop());

describe('Authorization 15 and field checks without a query per row', () => {
  it("several lists in one operation (a dashboard's) are read in one statement, each list exactly as asked alone", async () => {
    const lists = {
      recent: '(first: 4)',
      drafts: '(first: 3, filter: { status: [DRAFT] })',
      acme: '(first: 5, filter: { organization: "acme", status: [PUBLISHED, ARCHIVED] })',
      none: '(first: 2, filter: { status: [] })',
    };
    const selection = 'edges { cursor node { id title status owner { displayName email } } } pageInfo { hasNextPage endCursor }';
    for (const persona of ['alice', 'bob'] as const) {
      const token = await demo.token(persona);
      const query = `{ ${Object.entries(lists)
        .map(([alias, args]) => `${alias}: documents${args} { ${selection} }`)
        .join(' ')} }`;
      const together = await requestStatementsDuring(() => postGraphQL(service.graphqlUrl, { query }, { token }));
      expect(together.result.status).toBe(200);
      // the caller, then every list in one statement
      expect(together.statements).toHaveLength(2);
      expect(together.statements.filter((sql) => /from "documents"/i.test(sql))).toHaveLength(1);
      for (const [alias, args] of Object.entries(lists)) {
        const alone = await postGraphQL(service.graphqlUrl, { query: `{ ${alias}: documents${args} { ${selection} } }` }, { token });
        expect(together.result.json.data[alias], `${persona}: ${alias}`).toEqual(alone.json.data[alias]);
      }
      expect(together.result.json.data.recent.edges).toHaveLength(4);
      expect(together.result.json.data.none.edges).toHaveLength(0);
    }
  });

  it.each(['alice', 'bob', 'root'] as const)(
    'documents(first: 20) and documents(first: 5) cost the same small number of SQL statements (%s)',
    async (persona) => {
      const token = await demo.token(persona);
      const page = (first: number) => postGraphQL(service.graphqlUrl, { query: PAGE, variables: { first } }, { token });
      // Every request loads its own subject and loaders. The caller's first list of this process costs the caller's
      // statement and the page's; later pages read the caller in the page's own statement (caller-with-page.test.ts).
      await page(1);
      const twenty = await requestStatementsDuring(() => page(20));
      const five = await requestStatementsDuring(() => page(5));
      expect(twenty.result.status).toBe(200);
      expect(twenty.result.json.data.documents.edges).toHaveLength(20);
      expect(five.result.json.data.documents.edges).toHaveLength(5);
      expect(twenty.statements.length).toBe(five.statements.length);
      // the page with its organizations, its owners with their organization ids (for the e-mail rule) and the caller
      // (user + memberships); organizations and viewerCan add nothing.
      expect(twenty.statements.length).toBe(1);
      expect(twenty.statements.filter((sql) => /from "documents"/i.test(sql))).toHaveLength(1);
    },
  );

  it('the next page costs the same as the first', async () => {
    const token = await demo.token('alice');
    const first = await requestStatementsDuring(() =>
      postGraphQL(service.graphqlUrl, { query: PAGE, variables: { first: 20 } }, { token }),
    );
    const after = first.result.json.data.documents.pageInfo.endCursor;
    const next = await requestStatementsDuring(() =>
      postGraphQL(service.graphqlUrl, { query: PAGE, variables: { first: 20, after } }, { token }),
    );
    expect(next.result.json.data.documents.edges).toHaveLength(20);
    expect(next.statements.length).toBe(first.statements.length);
    expect(next.statements.length).toBe(1);
  });

  it('a page reads its owners in its own statement only when it selects them, fragments included', async () => {
    const token = await demo.token('alice');
    const listing = (statements: string[]) => statements.filter((sql) => /from "documents"/i.test(sql));
    const owners = /from "users" where "users"\."id" = any\(array_agg\(distinct "t"\."owner_shown"\)\)/;
    const withoutOwners = await requestStatementsDuring(() =>
      postGraphQL(service.graphqlUrl, { query: '{ documents(first: 20) { edges { node { id title } } } }' }, { token }),
    );
    expect(withoutOwners.statements).toHaveLength(1);
    expect(listing(withoutOwners.statements)[0]).not.toMatch(owners);

    const throughFragments = await requestStatementsDuring(() =>
      postGraphQL(
        service.graphqlUrl,
        {
          query:
            'query { documents(first: 20) { ...Page } } fragment Page on DocumentConnection { edges { node { ... on Document { owner { displayName email } } } } }',
        },
        { token },
      ),
    );
    expect(throughFragments.result.json.data.documents.edges).toHaveLength(20);
    expect(throughFragments.result.json.data.documents.edges[0].node.owner.email).toMatch(/@/);
    expect(throughFragments.statements).toHaveLength(1);
    expect(listing(throughFragments.statements)[0]).toMatch(owners);
  });
});

describe("Authentication 3: the caller's own account is read with the caller's attributes, in one statement", () => {
  it.each(['alice', 'bob'] as const)(
    'me and viewer.user cost the one statement that reads the caller (%s), and answer the account as stored',
    async (persona) => {
      const token = await demo.token(persona);
      const query = '{ me { id email displayName emailVerified } viewer { user { id email } } }';
      const asked = await requestStatementsDuring(() => postGraphQL(service.graphqlUrl, { query }, { token }));
      expect(asked.result.json.errors).toBeUndefined();
      expect(asked.statements).toHaveLength(1);
      expect(asked.statements[0]).toMatch(/from "users" left join "memberships"/i);
      const [stored] = await service.database.db.select().from(users).where(eq(users.id, demo.userId[persona]));
      expect(asked.result.json.data.me).toEqual({
        id: stored!.id,
        email: stored!.email,
        displayName: stored!.displayName,
        emailVerified: stored!.emailVerified,
      });
      expect(asked.result.json.data.viewer.user).toEqual({ id: stored!.id, email: stored!.email });
    },
  );
});

describe('Authorization 15: rows a request is reading anyway are not read twice', () => {
  it("a dashboard answers from five statements, run after run: the pinned document's owner, the caller's organization and memberships come from what the request reads anyway", async () => {
    const token = await demo.token('alice');
    // Pinned: a document of the caller's (as the bench's dashboard pins), so its owner's memberships are the caller's.
    const [pinned] = await service.database.db
      .select({ id: documents.id })
      .from(documents)
      .where(eq(documents.ownerId, demo.userId.alice))
      .limit(1);
    const counts: number[] = [];
    for (let run = 0; run < 5; run++) {
      const dashboard = await requestStatementsDuring(() =>
        postGraphQL(
          service.graphqlUrl,
          { query: DocumentDashboardDocument.toString(), variables: { organization: 'acme', pinned: pinned!.id } },
          { token },
        ),
      );
      const { data, errors } = dashboard.result.json;
      expect(errors).toBeUndefined();
      // Not vacuous: every part the statements below would otherwise read is in the answer.
      expect(data.pinned.owner.id).toBe(demo.userId.alice);
      expect(data.recent.edges.map((edge: any) => edge.node.owner.id)).toContain(data.pinned.owner.id);
      expect(data.pinned.owner.memberships.map((m: any) => m.role)).toEqual(['OWNER']);
      expect(data.me.memberships.map((m: any) => [m.organization.slug, m.role])).toEqual([['acme', 'OWNER']]);
      expect(data.organization).toMatchObject({ slug: 'acme', billingEmail: expect.any(String) });
      // the caller, the pinned document, the lists, the memberships (the caller's, who owns the pinned one), the passkeys
      counts.push(dashboard.statements.length);
      // no statement of the users loader (one owner or several), which groups the owners' organizations
      expect(dashboard.statements.filter((sql) => /group by "users"\."id"/i.test(sql))).toEqual([]);
      // the lists' statement reads their organizations beside their rows; no other statement reads one
      expect(
        dashboard.statements.filter((sql) => /from "organizations"/i.test(sql) && !/json_agg\(json_build_array\("t"\./.test(sql)),
      ).toEqual([]);
      expect(dashboard.statements.filter((sql) => /from "memberships" inner join "organizations"/i.test(sql))).toHaveLength(1);
    }
    expect(counts).toEqual([5, 5, 5, 5, 5]);
  });

  it("a role change shows in a later field of the same operation: the request's loader does not answer what it held before (Authorization 7)", async () => {
    const token = await demo.token('alice');
    const change = (alias: string, role: string) =>
      `${alias}: changeMemberRole(input: { organization: "acme", userId: "${demo.userId.erin}", role: ${role} }) {
        membership { role user { memberships { organization { slug } role } } } userErrors { code } }`;
    const query = `mutation { ${change('toViewer', 'VIEWER')} ${change('backToEditor', 'EDITOR')} }`;
    const { json } = await postGraphQL(service.graphqlUrl, { query }, { token });
    expect(json.errors).toBeUndefined();
    expect(json.data.toViewer.membership.user.memberships).toEqual([{ organization: { slug: 'acme' }, role: 'VIEWER' }]);
    expect(json.data.backToEditor.membership.user.memberships).toEqual([{ organization: { slug: 'acme' }, role: 'EDITOR' }]);
  });

  it("the memberships of a page's owners cost one statement whatever the page size (Authorization 15)", async () => {
    const token = await demo.token('alice');
    const query = `query ($first: Int!) { documents(first: $first) { edges { node { id owner { id memberships { role organization { slug } } } } } } }`;
    const page = (first: number) =>
      requestStatementsDuring(() => postGraphQL(service.graphqlUrl, { query, variables: { first } }, { token }));
    const twenty = await page(20);
    const five = await page(5);
    expect(twenty.result.json.errors).toBeUndefined();
    // Not vacuous: the page of twenty shows several owners, each with memberships.
    const owners = new Set(twenty.result.json.data.documents.edges.map((edge: any) => edge.node.owner.id));
    expect(owners.size).toBeGreaterThan(1);
    expect(twenty.result.json.data.documents.edges.every((edge: any) => edge.node.owner.memberships.length > 0)).toBe(true);
    expect(twenty.statements.length).toBe(five.statements.length);
    expect(twenty.statements.filter((sql) => /from "memberships" inner join "organizations"/i.test(sql))).toHaveLength(1);
  });
});
