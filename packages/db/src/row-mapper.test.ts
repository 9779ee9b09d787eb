import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from './client.js';
import { reusableRead } from './prepared.js';
import { compileRowMapper } from './row-mapper.js';
import { documents, memberships, organizations, users } from './schema/index.js';
import { seedDemoData } from './seed.js';
import { openOwnDatabase } from './testing/own-database.js';

let database: DatabaseHandle;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ database, close } = await openOwnDatabase('row_mapper'));
  await seedDemoData(database);
  // An account with no membership, so the left join below leaves a row's joined table empty.
  await database.db.insert(users).values({ email: 'loner@example.test' });
});
afterAll(() => close?.());

// Each select runs twice: as drizzle maps it (a query built on the spot) and as a reusable read (the compiled
// mapper); the answers must be equal, value for value, Dates and nulls included.
const selects = {
  'nested objects of an inner join, timestamps and an sql field': (db: DatabaseHandle['db']) =>
    db
      .select({ document: documents, organization: organizations, position: sql<string>`${documents.createdAt}::text` })
      .from(documents)
      .innerJoin(organizations, eq(organizations.id, documents.organizationId))
      .orderBy(documents.id),
  'a left-joined table that is empty becomes null, as drizzle makes it': (db: DatabaseHandle['db']) =>
    db
      .select({ user: users, membership: memberships })
      .from(users)
      .leftJoin(memberships, eq(memberships.userId, users.id))
      .orderBy(users.id),
  'flat fields from both sides of a left join, and an sql field with mapWith': (db: DatabaseHandle['db']) =>
    db
      .select({
        id: users.id,
        role: memberships.role,
        joined: memberships.createdAt,
        count: sql<number>`length(${users.email})`.mapWith(Number),
      })
      .from(users)
      .leftJoin(memberships, eq(memberships.userId, users.id))
      .orderBy(users.id),
};

describe('compileRowMapper maps rows exactly as drizzle does', () => {
  for (const [title, build] of Object.entries(selects)) {
    it(title, async () => {
      const expected = await build(database.db);
      const reusable = reusableRead<Record<string, never>, unknown[]>(`row_mapper_${Object.keys(selects).indexOf(title)}`, (db) =>
        build(db),
      );
      const actual = await reusable(database.db, {});
      expect(actual).toEqual(expected);
      expect(expected.length).toBeGreaterThan(1);
    });
  }

  it('the empty joined table really occurs in the data (the case above is exercised)', async () => {
    const rows = await selects['a left-joined table that is empty becomes null, as drizzle makes it'](database.db);
    expect(rows.some((row) => row.membership === null)).toBe(true);
    expect(rows.some((row) => row.membership !== null)).toBe(true);
  });

  it('refuses a selection nested deeper than drizzle selects allow here', () => {
    expect(() => compileRowMapper([{ path: ['a', 'b', 'c'], field: users.id }])).toThrow(/nest at most one level/);
  });
});
