import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../client.js';
import { documents, memberships, organizations, users } from '../schema/index.js';
import { seedDemoData } from '../seed.js';
import { openOwnDatabase } from '../testing/own-database.js';
import { statementsDuring } from '../testing/statements.js';
import {
  listVisibleDocuments,
  listVisibleDocumentsTogether,
  listVisibleDocumentsWithCaller,
  type DocumentListQuery,
} from './document-lists.js';
import { findOrganizationBySlug } from './organizations.js';
import { findUserWithRoles, type UserWithRoles } from './users.js';

let database: DatabaseHandle;
let close: () => Promise<void>;
let acme: string;
let globex: string;

beforeAll(async () => {
  ({ database, close } = await openOwnDatabase('document_lists'));
  await seedDemoData(database);
  acme = (await findOrganizationBySlug(database.db, 'acme'))!.id;
  globex = (await findOrganizationBySlug(database.db, 'globex'))!.id;
});
afterAll(() => close?.());

const list = (query: Partial<DocumentListQuery>): DocumentListQuery => ({
  visibility: { everything: true },
  organizationSlug: null,
  statuses: null,
  after: null,
  limit: 100,
  ...query,
});

describe('Authorization 15: several lists of one request are read in one statement, each exactly as on its own', () => {
  it('lists of different visibility, filters, pages and limits, with and without owners, in one statement', async () => {
    const now = new Date();
    const [newest] = await listVisibleDocuments(database.db, list({ limit: 1 }));
    const queries = [
      list({ visibility: { everything: false, anyStatusIn: [globex], publishedIn: [acme], now }, withOwners: true }),
      list({ organizationSlug: 'acme', statuses: ['DRAFT'] }),
      list({ statuses: [] }),
      list({ after: { createdAt: newest!.position, id: newest!.document.id }, limit: 3, withOwners: true }),
      list({ visibility: { everything: false, anyStatusIn: [], publishedIn: [], now } }),
      list({
        visibility: { everything: false, anyStatusIn: [acme, globex], publishedIn: [], now },
        statuses: ['PUBLISHED', 'ARCHIVED'],
        limit: 2,
      }),
    ];
    const together = await statementsDuring(() => listVisibleDocumentsTogether(database.db, queries));
    expect(together.statements).toHaveLength(1);
    expect(together.result).toHaveLength(queries.length);
    for (const [index, query] of queries.entries()) {
      expect(together.result[index], `list ${index}`).toEqual(await listVisibleDocuments(database.db, query));
    }
    // Not vacuous: the lists differ, some are empty, some are cut by their limit.
    expect(together.result.map((rows) => rows.length)).toEqual([4, 1, 0, 3, 0, 2]);
  });

  it('the same lists in another order answer in that order; one list alone is its own statement', async () => {
    const queries = [list({ organizationSlug: 'globex' }), list({ organizationSlug: 'acme', withOwners: true })];
    const [globexRows, acmeRows] = await listVisibleDocumentsTogether(database.db, queries);
    const [acmeAgain, globexAgain] = await listVisibleDocumentsTogether(database.db, [...queries].reverse());
    expect(globexRows!.every((row) => row.organization.slug === 'globex')).toBe(true);
    expect(acmeRows!.every((row) => row.organization.slug === 'acme' && row.owner)).toBe(true);
    expect(acmeAgain).toEqual(acmeRows);
    expect(globexAgain).toEqual(globexRows);
    const alone = await statementsDuring(() => listVisibleDocumentsTogether(database.db, [queries[0]!]));
    expect(alone.result).toEqual([globexRows]);
    expect(alone.statements).toHaveLength(1);
    expect(alone.statements[0]).not.toMatch(/union all/i);
  });
});

describe("Authentication 3: the caller's account and roles read in a page's own statement", () => {
  const sortedRoles = (user: UserWithRoles | null) =>
    user && { ...user, roles: [...user.roles].sort((a, b) => a.organizationId.localeCompare(b.organizationId)) };
  const userId = async (email: string) => (await database.db.select({ id: users.id }).from(users).where(eq(users.email, email)))[0]!.id;

  it('one statement answers the caller exactly as findUserWithRoles does, and each list exactly as read without the caller', async () => {
    const now = new Date();
    const cases = [
      [list({ organizationSlug: 'acme', withOwners: true })],
      [list({ visibility: { everything: false, anyStatusIn: [acme], publishedIn: [], now }, limit: 21 }), list({ statuses: ['DRAFT'] })],
    ];
    // an owner, a viewer, an editor whose e-mail is unverified, and the super-admin without any membership
    for (const email of ['alice@acme.test', 'bob@acme.test', 'erin@acme.test', 'root@latchkey.test']) {
      const id = await userId(email);
      for (const queries of cases) {
        const read = await statementsDuring(() => listVisibleDocumentsWithCaller(database.db, queries, id));
        expect(read.statements).toHaveLength(1);
        expect(sortedRoles(read.result.caller), email).toStrictEqual(sortedRoles(await findUserWithRoles(database.db, id)));
        expect(read.result.lists).toEqual(await listVisibleDocumentsTogether(database.db, queries));
      }
    }
    // Not vacuous: roles and none, and lists with rows.
    expect((await listVisibleDocumentsWithCaller(database.db, cases[0]!, await userId('alice@acme.test'))).caller!.roles).toHaveLength(1);
    expect((await listVisibleDocumentsWithCaller(database.db, cases[0]!, await userId('root@latchkey.test'))).caller!.roles).toEqual([]);
    expect((await listVisibleDocumentsTogether(database.db, cases[1]!)).every((rows) => rows.length > 0)).toBe(true);
  });

  it('an account that does not exist is null, and the lists are still read', async () => {
    const queries = [list({ organizationSlug: 'acme' })];
    const read = await listVisibleDocumentsWithCaller(database.db, queries, '00000000-0000-4000-8000-000000000000');
    expect(read.caller).toBeNull();
    expect(read.lists).toEqual(await listVisibleDocumentsTogether(database.db, queries));
    expect(read.lists[0]!.length).toBeGreaterThan(0);
  });
});

describe('Authorization 15: a page arrives as one JSON text, and each of its rows is what the tables hold', () => {
  // A database of its own: the rows added here would change the lists the tests above count.
  let own: DatabaseHandle;
  let closeOwn: () => Promise<void>;
  beforeAll(async () => {
    ({ database: own, close: closeOwn } = await openOwnDatabase('document_lists_json'));
    await seedDemoData(own);
  });
  afterAll(() => closeOwn?.());

  it('text of every kind, optional columns null and set, microsecond timestamps and an owner in two organizations: as a plain select reads them', async () => {
    const acmeRow = (await findOrganizationBySlug(own.db, 'acme'))!;
    const globexRow = (await findOrganizationBySlug(own.db, 'globex'))!;
    const [alice] = await own.db.select().from(users).where(eq(users.email, 'alice@acme.test'));
    await own.db.insert(memberships).values({ organizationId: globexRow.id, userId: alice!.id, role: 'VIEWER' });
    // Everything JSON must escape or carry: quotes, backslashes, control characters, non-Latin text, astral emoji.
    const tricky = 'quote " backslash \\ slash / newline \n tab \t bell \u0007 é 日本 😀 </script> {"not": "json"}';
    await own.db.insert(documents).values({
      organizationId: acmeRow.id,
      ownerId: alice!.id,
      title: `Tricky ${tricky}`,
      body: tricky,
      status: 'PUBLISHED',
      legalHold: true,
      embargoUntil: sql`'2031-02-03 04:05:06.123456+00'::timestamptz`,
      internalNotes: tricky,
    });

    const rows = await listVisibleDocuments(own.db, list({ organizationSlug: 'acme', withOwners: true }));
    // Not vacuous: both kinds of each optional column, and the tricky row, are on the page.
    expect(rows.length).toBeGreaterThan(3);
    expect(rows.some(({ document }) => document.title === `Tricky ${tricky}`)).toBe(true);
    for (const column of ['embargoUntil', 'internalNotes'] as const) {
      expect(rows.some(({ document }) => document[column] === null)).toBe(true);
      expect(rows.some(({ document }) => document[column] !== null)).toBe(true);
    }
    expect(rows.some(({ owner }) => owner!.organizationIds.length === 2)).toBe(true);

    for (const row of rows) {
      const [document] = await own.db.select().from(documents).where(eq(documents.id, row.document.id));
      const [organization] = await own.db.select().from(organizations).where(eq(organizations.id, document!.organizationId));
      const [owner] = await own.db.select().from(users).where(eq(users.id, document!.ownerId));
      const organizationIds = await own.db
        .select({ id: memberships.organizationId })
        .from(memberships)
        .where(eq(memberships.userId, owner!.id));
      const [{ position }] = (await own.db
        .select({ position: sql<string>`${documents.createdAt}::text` })
        .from(documents)
        .where(eq(documents.id, document!.id))) as [{ position: string }];
      expect(row.document).toStrictEqual(document);
      expect(row.organization).toStrictEqual(organization);
      expect(row.owner!.user).toStrictEqual(owner);
      expect([...row.owner!.organizationIds].sort()).toEqual(organizationIds.map(({ id }) => id).sort());
      expect(row.position).toBe(position);
    }
    const embargoed = rows.find(({ document }) => document.embargoUntil !== null && document.title.startsWith('Tricky'))!;
    expect(embargoed.document.embargoUntil!.toISOString()).toBe('2031-02-03T04:05:06.123Z');
  });
});
