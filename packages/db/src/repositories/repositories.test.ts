import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../client.js';
import { seedDemoData } from '../seed.js';
import { openOwnDatabase } from '../testing/own-database.js';
import { insertDocumentEvent, nextDocumentEventSeq, purgeDocumentEvents, readDocumentEventBatch } from './document-events.js';
import { listVisibleDocuments, type DocumentListQuery, type DocumentVisibility } from './document-lists.js';
import { countOwners, findMemberRole, listMembershipsOfUser, setMemberRole } from './memberships.js';
import { findOrganizationBySlug, listPlansOfUser, setOrganizationPlan } from './organizations.js';
import { listPasskeysOfUser } from './passkeys.js';
import { passkeys } from '../schema/index.js';
import { findUserById, findAnyUserIdByEmail, findUserWithRoles } from './users.js';

let database: DatabaseHandle;
let close: () => Promise<void>;
let acme: string;
let globex: string;
const now = new Date();

beforeAll(async () => {
  ({ database, close } = await openOwnDatabase('repositories'));
  await seedDemoData(database);
  acme = (await findOrganizationBySlug(database.db, 'acme'))!.id;
  globex = (await findOrganizationBySlug(database.db, 'globex'))!.id;
});
afterAll(() => close?.());

const all: DocumentVisibility = { everything: true };
const some = (anyStatusIn: string[], publishedIn: string[]): DocumentVisibility => ({ everything: false, anyStatusIn, publishedIn, now });

async function titles(query: Partial<DocumentListQuery> & { visibility: DocumentVisibility }): Promise<string[]> {
  const rows = await listVisibleDocuments(database.db, { organizationSlug: null, statuses: null, after: null, limit: 100, ...query });
  return rows.map((row) => row.document.title).sort();
}

describe('listVisibleDocuments applies the visibility it is given, in SQL', () => {
  it('everything, nothing, every status of some organizations, the published ones of others', async () => {
    expect(await titles({ visibility: all })).toHaveLength(7);
    expect(await titles({ visibility: some([], []) })).toEqual([]);
    expect(await titles({ visibility: some([globex], []) })).toEqual(['Globex handbook', 'Globex merger draft']);
    // Published and out of embargo only: not the draft, the archived one, nor the embargoed announcement.
    expect(await titles({ visibility: some([], [acme]) })).toEqual(['Litigation memo', 'Quarterly plan']);
    expect(await titles({ visibility: some([globex], [acme]) })).toEqual([
      'Globex handbook',
      'Globex merger draft',
      'Litigation memo',
      'Quarterly plan',
    ]);
  });

  it('each list shape has its own reused statement: lists of one and of two organizations (and statuses) in turn never answer for each other', async () => {
    const globexAll = ['Globex handbook', 'Globex merger draft'];
    const acmeAll = await titles({ visibility: all, organizationSlug: 'acme' });
    expect(await titles({ visibility: some([globex], []) })).toEqual(globexAll);
    expect(await titles({ visibility: some([globex, acme], []) })).toEqual([...globexAll, ...acmeAll].sort());
    expect(await titles({ visibility: some([acme], []) })).toEqual(acmeAll);
    expect(await titles({ visibility: some([], [acme, globex]) })).toEqual(['Globex handbook', 'Litigation memo', 'Quarterly plan']);
    expect(await titles({ visibility: some([], [globex]) })).toEqual(['Globex handbook']);
    expect(await titles({ visibility: all, statuses: ['DRAFT', 'ARCHIVED'] })).toHaveLength(
      (await titles({ visibility: all, statuses: ['DRAFT'] })).length + (await titles({ visibility: all, statuses: ['ARCHIVED'] })).length,
    );
  });

  it('filters by organization and status (an empty status list matches none)', async () => {
    expect(await titles({ visibility: all, organizationSlug: 'globex' })).toEqual(['Globex handbook', 'Globex merger draft']);
    expect(await titles({ visibility: all, statuses: ['DRAFT'] })).toEqual(['Draft roadmap', 'Globex merger draft']);
    expect(await titles({ visibility: all, statuses: [] })).toEqual([]);
  });

  it('pages newest first by keyset, each row with its organization and position', async () => {
    const first = await listVisibleDocuments(database.db, {
      visibility: all,
      organizationSlug: null,
      statuses: null,
      after: null,
      limit: 3,
    });
    expect(first).toHaveLength(3);
    expect(first.every((row) => row.organization.id === row.document.organizationId)).toBe(true);
    const last = first.at(-1)!;
    const rest = await listVisibleDocuments(database.db, {
      visibility: all,
      organizationSlug: null,
      statuses: null,
      after: { createdAt: last.position, id: last.document.id },
      limit: 100,
    });
    const ids = [...first, ...rest].map((row) => row.document.id);
    expect(new Set(ids).size).toBe(7);
  });

  it("withOwners: each row brings its owner exactly as read on its own, with the ids of the owner's organizations", async () => {
    for (const statuses of [null, ['DRAFT', 'PUBLISHED'] as const]) {
      const rows = await listVisibleDocuments(database.db, {
        visibility: all,
        organizationSlug: null,
        statuses,
        after: null,
        limit: 100,
        withOwners: true,
      });
      expect(rows.length).toBeGreaterThan(1);
      for (const row of rows) {
        expect(row.owner?.user).toEqual(await findUserById(database.db, row.document.ownerId));
        const memberOf = (await listMembershipsOfUser(database.db, row.document.ownerId)).map((m) => m.organization.id);
        expect([...row.owner!.organizationIds].sort()).toEqual(memberOf.sort());
      }
      // Without the option, no owner is read.
      const plain = await listVisibleDocuments(database.db, { visibility: all, organizationSlug: null, statuses, after: null, limit: 100 });
      expect(plain.map((row) => row.document.id)).toEqual(rows.map((row) => row.document.id));
      expect(plain.every((row) => row.owner === undefined)).toBe(true);
    }
  });
});

describe('users and memberships', () => {
  it('an account with its roles; none for an unknown id; ids by e-mail', async () => {
    const alice = (await findAnyUserIdByEmail(database.db, 'alice@acme.test'))!;
    expect(await findUserWithRoles(database.db, alice)).toMatchObject({ id: alice, roles: [{ organizationId: acme, role: 'OWNER' }] });
    const root = (await findAnyUserIdByEmail(database.db, 'root@latchkey.test'))!;
    expect(await findUserWithRoles(database.db, root)).toMatchObject({ superAdmin: true, roles: [] });
    expect(await findUserWithRoles(database.db, '00000000-0000-4000-8000-000000000000')).toBeNull();
    expect(await findAnyUserIdByEmail(database.db, 'nobody@acme.test')).toBeNull();
  });

  it('roles are read, counted and changed per member', async () => {
    const erin = (await findAnyUserIdByEmail(database.db, 'erin@acme.test'))!;
    expect(await countOwners(database.db, acme)).toBe(1);
    await setMemberRole(database.db, { organizationId: acme, userId: erin }, 'OWNER');
    expect(await findMemberRole(database.db, { organizationId: acme, userId: erin })).toBe('OWNER');
    expect(await countOwners(database.db, acme)).toBe(2);
    await setMemberRole(database.db, { organizationId: acme, userId: erin }, 'EDITOR');
    expect(await findMemberRole(database.db, { organizationId: globex, userId: erin })).toBeNull();
    expect((await listMembershipsOfUser(database.db, erin)).map((m) => [m.organization.slug, m.role])).toEqual([['acme', 'EDITOR']]);
  });
});

describe('organizations', () => {
  it("a plan is set by slug in one statement that answers the plan before; its members' plans follow; an unknown slug changes nothing", async () => {
    const carol = (await findAnyUserIdByEmail(database.db, 'carol@globex.test'))!;
    expect(await listPlansOfUser(database.db, carol)).toEqual(['FREE']);
    expect(await setOrganizationPlan(database.db, 'globex', 'PRO')).toEqual({ previous: 'FREE' });
    expect((await findOrganizationBySlug(database.db, 'globex'))!.plan).toBe('PRO');
    expect(await listPlansOfUser(database.db, carol)).toEqual(['PRO']);
    expect(await setOrganizationPlan(database.db, 'globex', 'PRO')).toEqual({ previous: 'PRO' });
    expect(await setOrganizationPlan(database.db, 'globex', 'FREE')).toEqual({ previous: 'PRO' });
    expect(await setOrganizationPlan(database.db, 'no-such-organization', 'PRO')).toBeNull();
    expect((await findOrganizationBySlug(database.db, 'acme'))!.plan).toBe('PRO');
    expect((await findOrganizationBySlug(database.db, 'globex'))!.plan).toBe('FREE');
  });
});

describe('passkeys', () => {
  it("an account's passkeys, oldest first and by id within a moment, each decoded as the table declares it, no one else's", async () => {
    const alice = (await findAnyUserIdByEmail(database.db, 'alice@acme.test'))!;
    const bob = (await findAnyUserIdByEmail(database.db, 'bob@acme.test'))!;
    const at = new Date('2026-01-02T03:04:05.678Z');
    const key = (id: string, userId: string, createdAt: Date) => ({
      id,
      userId,
      userHandle: `handle-${id}`,
      publicKey: new Uint8Array([1, 2, 3]),
      counter: 4_294_967_295,
      transports: ['usb', 'nfc'],
      deviceType: 'singleDevice',
      backedUp: false,
      aaguid: '00000000-0000-0000-0000-000000000000',
      rpId: 'localhost',
      createdAt,
    });
    await database.db
      .insert(passkeys)
      .values([key('pk-b', alice, at), key('pk-a', alice, at), key('pk-0', alice, new Date(at.getTime() + 1000)), key('pk-bob', bob, at)]);
    const listed = await listPasskeysOfUser(database.db, alice);
    expect(listed.map((row) => row.id)).toEqual(['pk-a', 'pk-b', 'pk-0']);
    expect(listed[0]).toEqual({ ...key('pk-a', alice, at), label: null, lastUsedAt: null });
    expect(listed[0]!.publicKey).toBeInstanceOf(Uint8Array);
    expect(await listPasskeysOfUser(database.db, '00000000-0000-4000-8000-000000000000')).toEqual([]);
  });
});

describe('the document event outbox', () => {
  it('starts after the newest event, reads in order, and purges below a watermark', async () => {
    const db = database.background;
    const start = await nextDocumentEventSeq(db);
    await insertDocumentEvent(db, { kind: 'CREATED', documentId: 'a' }, null);
    await insertDocumentEvent(db, { kind: 'UPDATED', documentId: 'a' }, 'latchkey_repositories_test');
    expect(await nextDocumentEventSeq(db)).toBe(start + 2);
    const rows = await readDocumentEventBatch(db, start, 10);
    expect(rows.map((row) => [row.seq, JSON.parse(row.event!).kind])).toEqual([
      [String(start), 'CREATED'],
      [String(start + 1), 'UPDATED'],
    ]);
    await purgeDocumentEvents(db, 0);
    const [empty] = await readDocumentEventBatch(db, start, 10);
    expect(empty).toMatchObject({ seq: null, purged: String(start + 1) });
    expect(await nextDocumentEventSeq(db)).toBe(start + 2);
  });
});
