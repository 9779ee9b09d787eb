import { randomUUID } from 'node:crypto';
import { and, documents, eq, memberships, organizations, users, type Role } from '@latchkey/db';
import { requestStatementsDuring } from './support/cost.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callRest, reseed } from './support/demo.js';
import { postGraphQL, startTestService, type TestService } from './support/service.js';
import { COST_REPORTED } from './support/cost.js';

// A page of documents may read the caller's attributes in its own statement, with the list the caller's previous page
// was read with. These tests change the caller between two pages and require the second page to be decided on the
// attributes as they are then, never on the list read ahead for the attributes as they were.

const PAGE = `query Page($organization: String) {
  documents(first: 20, filter: { organization: $organization }) {
    edges { node { id title status embargoUntil owner { displayName } viewerCan { update delete } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

let service: TestService;
let acmeId: string;

beforeAll(async () => {
  service = await startTestService();
  await reseed(service.database);
  const [acme] = await service.database.db.select().from(organizations).where(eq(organizations.slug, 'acme'));
  acmeId = acme!.id;
});
afterAll(() => service?.stop());

/** A new account of its own (no guess of its visibility yet), with a role in acme or none. */
async function newCaller(role: Role | null, attributes: { superAdmin?: boolean } = {}) {
  const { db } = service.database;
  const [user] = await db
    .insert(users)
    .values({ email: `page-${randomUUID()}@acme.test`, emailVerified: true, ...attributes })
    .returning({ id: users.id });
  if (role) await db.insert(memberships).values({ organizationId: acmeId, userId: user!.id, role });
  const token = await service.token(user!.id);
  const page = (organization: string | null = 'acme') =>
    requestStatementsDuring(() => postGraphQL(service.graphqlUrl, { query: PAGE, variables: { organization } }, { token }));
  const setRole = (next: Role) =>
    db
      .update(memberships)
      .set({ role: next })
      .where(and(eq(memberships.userId, user!.id), eq(memberships.organizationId, acmeId)));
  return { id: user!.id, token, page, setRole };
}

const statusesOf = (json: any): string[] => json.data.documents.edges.map((edge: any) => edge.node.status);
const listing = (statements: string[]) => statements.filter((sql) => /from "documents"/i.test(sql));

describe("Authentication 3: the caller's attributes, read in the page's own statement", () => {
  it("a caller's first page reads the caller, then the page; from the second page on, one statement reads both", async () => {
    const caller = await newCaller('EDITOR');
    const first = await caller.page();
    expect(first.result.json.errors).toBeUndefined();
    expect(first.statements).toHaveLength(2);
    const second = await caller.page();
    expect(second.statements).toHaveLength(1);
    expect(second.statements[0]).toMatch(/from "documents"/i);
    expect(second.statements[0]).toMatch(/from "memberships" where "memberships"\."user_id" = "users"\."id"/i);
    expect(second.result.json).toEqual(first.result.json);
    // Not vacuous: an EDITOR's page holds drafts.
    expect(statusesOf(second.result.json)).toContain('DRAFT');
  });

  it('a role lowered between two pages shows on the second: a VIEWER sees no draft and no embargo (Authorization 6, 11)', async () => {
    const caller = await newCaller('EDITOR');
    const viewer = await newCaller('VIEWER');
    expect(statusesOf((await caller.page()).result.json)).toContain('DRAFT');
    await caller.setRole('VIEWER');
    const lowered = await caller.page();
    expect(lowered.result.json.errors).toBeUndefined();
    // the statement read ahead for the EDITOR, then the list the VIEWER may see
    expect(listing(lowered.statements)).toHaveLength(2);
    // exactly a VIEWER's page: what an account that was always a VIEWER sees (its own first page, without any read ahead)
    const always = (await viewer.page()).result.json;
    expect(lowered.result.json.data.documents.edges.map((edge: any) => edge.node.id)).toEqual(
      always.data.documents.edges.map((edge: any) => edge.node.id),
    );
    expect(new Set(statusesOf(lowered.result.json))).toEqual(new Set(['PUBLISHED']));
    expect(lowered.result.json.data.documents.edges.every((edge: any) => edge.node.viewerCan.update === false)).toBe(true);
    // and back: the next page reads ahead with the VIEWER's list, which no longer holds
    await caller.setRole('EDITOR');
    expect(statusesOf((await caller.page()).result.json)).toContain('DRAFT');
  });

  it('a membership removed between two pages: the organization is gone from the second', async () => {
    const caller = await newCaller('OWNER');
    expect((await caller.page()).result.json.data.documents.edges.length).toBeGreaterThan(0);
    await service.database.db.delete(memberships).where(eq(memberships.userId, caller.id));
    const after = await caller.page();
    expect(after.result.json).toEqual({
      data: { documents: { edges: [], pageInfo: { hasNextPage: false, endCursor: null } } },
      extensions: COST_REPORTED,
    });
    const everywhere = await caller.page(null);
    expect(everywhere.result.json.data.documents.edges).toEqual([]);
  });

  it('a super-admin demoted between two pages sees only their own organizations on the second (Authorization 8)', async () => {
    const caller = await newCaller('VIEWER', { superAdmin: true });
    const before = (await caller.page(null)).result.json;
    expect(before.data.documents.edges.map((edge: any) => edge.node.status)).toContain('DRAFT');
    await service.database.db.update(users).set({ superAdmin: false }).where(eq(users.id, caller.id));
    const after = await caller.page(null);
    expect(after.result.json.errors).toBeUndefined();
    expect(new Set(statusesOf(after.result.json))).toEqual(new Set(['PUBLISHED']));
  });

  it('an account suspended between two pages is refused, as a suspended account always is', async () => {
    const caller = await newCaller('EDITOR');
    const alwaysSuspended = await newCaller('EDITOR');
    await service.database.db.update(users).set({ suspended: true }).where(eq(users.id, alwaysSuspended.id));
    const refused = (await alwaysSuspended.page()).result;
    expect(refused.json.errors[0]).toMatchObject({ path: ['documents'], extensions: { code: 'FORBIDDEN' } });

    await caller.page();
    await service.database.db.update(users).set({ suspended: true }).where(eq(users.id, caller.id));
    const after = (await caller.page()).result;
    expect(after.status).toBe(refused.status);
    expect(after.json).toEqual(refused.json);
  });

  it('an account deleted between two pages is answered as a token of no account always is', async () => {
    const caller = await newCaller('EDITOR');
    const noAccount = await postGraphQL(
      service.graphqlUrl,
      { query: PAGE, variables: { organization: 'acme' } },
      { token: await service.token(randomUUID()) },
    );
    await caller.page();
    await service.database.db.delete(documents).where(eq(documents.ownerId, caller.id));
    await service.database.db.delete(users).where(eq(users.id, caller.id));
    const after = (await caller.page()).result;
    expect(after.status).toBe(noAccount.status);
    expect(after.json).toEqual(noAccount.json);
    expect(after.json.errors[0]).toMatchObject({ path: ['documents'] });
  });

  it('several lists of one operation: each exactly as asked alone, with the caller read once', async () => {
    const caller = await newCaller('EDITOR');
    const lists = {
      drafts: 'documents(first: 3, filter: { status: [DRAFT] }) { edges { node { id status } } }',
      published: 'documents(first: 4, filter: { organization: "acme", status: [PUBLISHED] }) { edges { node { id status } } }',
    };
    const ask = (query: string) => requestStatementsDuring(() => postGraphQL(service.graphqlUrl, { query }, { token: caller.token }));
    await ask(`{ ${lists.drafts} }`);
    const both = await ask(`{ drafts: ${lists.drafts} published: ${lists.published} }`);
    expect(both.result.json.errors).toBeUndefined();
    expect(both.statements.filter((sql) => /from "users" left join "memberships"/i.test(sql))).toEqual([]);
    for (const [alias, field] of Object.entries(lists)) {
      const alone = await postGraphQL(service.graphqlUrl, { query: `{ ${alias}: ${field} }` }, { token: caller.token });
      expect(both.result.json.data[alias]).toEqual(alone.json.data[alias]);
    }
    // Not vacuous: both lists hold rows, and differ.
    expect(both.result.json.data.drafts.edges.map((edge: any) => edge.node.status)).toContain('DRAFT');
    expect(both.result.json.data.published.edges.length).toBeGreaterThan(1);
  });

  it('over REST as well: GET /api/documents after a role is lowered lists what the lower role may see', async () => {
    const caller = await newCaller('EDITOR');
    const list = () => callRest(service, 'GET', '/api/documents?organization=acme&first=20', { token: caller.token });
    const first = await list();
    expect(first.status).toBe(200);
    expect(first.json.data.map((item: any) => item.status)).toContain('DRAFT');
    const again = await requestStatementsDuring(list);
    expect(again.result.json).toEqual(first.json);
    expect(again.statements.filter((sql) => /from "users" left join "memberships"/i.test(sql))).toEqual([]);
    await caller.setRole('VIEWER');
    const lowered = await list();
    expect(lowered.status).toBe(200);
    expect(new Set(lowered.json.data.map((item: any) => item.status))).toEqual(new Set(['PUBLISHED']));
  });
});
