import { eq, persistedAppVersions, persistedOperations, sql, type DatabaseHandle } from '@latchkey/db';
import { openOwnDatabase } from '@latchkey/db/testing';
import { parse } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../document-id.js';
import { createPersistedStore } from './persisted-store.js';

let database: DatabaseHandle;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ database, close } = await openOwnDatabase('persisted_store'));
});
afterAll(() => close?.());
beforeEach(async () => {
  await database.db.delete(persistedOperations);
  await database.db.delete(persistedAppVersions);
});

const operation = (n: number) => {
  const query = `query Q${n} { status { version } }`;
  return { hash: sha256Hex(query), query };
};

describe('the persisted-operation store (an LRU in process in front of a PostgreSQL table)', () => {
  it('a registration is seen by another instance on the same database, and after a restart', async () => {
    const first = createPersistedStore({ db: database.db });
    const { hash, query } = operation(1);
    expect(await first.get(hash)).toBeUndefined();
    await first.register(hash, query);
    expect(await first.get(hash)).toMatchObject({ hash, query, source: 'apq' });
    const second = createPersistedStore({ db: database.db });
    expect(await second.get(hash)).toMatchObject({ hash, query, source: 'apq' });
  });

  it('the table keeps at most maxRegistrations APQ rows: the least recently used go, a recently used one stays', async () => {
    const store = createPersistedStore({ db: database.db, maxRegistrations: 3, cacheSize: 1 });
    const ops = [1, 2, 3, 4, 5].map(operation);
    for (const op of ops.slice(0, 3)) {
      await store.register(op.hash, op.query);
      await database.db.execute(sql`select pg_sleep(0.01)`);
    }
    // Operation 1 is used again (read from the table: the cache holds one entry), so it is the most recent.
    const fresh = createPersistedStore({ db: database.db, maxRegistrations: 3 });
    expect(await fresh.get(ops[0]!.hash)).toBeDefined();
    await store.register(ops[3]!.hash, ops[3]!.query);
    await store.register(ops[4]!.hash, ops[4]!.query);
    const left = (await database.db.select({ hash: persistedOperations.hash }).from(persistedOperations)).map((row) => row.hash).sort();
    expect(left).toEqual([ops[0]!.hash, ops[3]!.hash, ops[4]!.hash].sort());
    expect(await store.count()).toEqual({ apq: 3, allowlist: 0 });
  });

  it('allowlist rows are never evicted, and are the only ones served with allowlistOnly', async () => {
    const store = createPersistedStore({ db: database.db, maxRegistrations: 1 });
    const trusted = operation(10);
    expect(await store.importAllowlist([trusted])).toEqual({ added: 1, unchanged: 0 });
    expect(await store.importAllowlist([trusted])).toEqual({ added: 0, unchanged: 1 });
    for (const n of [11, 12, 13]) await store.register(operation(n).hash, operation(n).query);
    expect(await store.count()).toEqual({ apq: 1, allowlist: 1 });
    expect(await store.get(trusted.hash, { allowlistOnly: true })).toMatchObject({ source: 'allowlist' });
    expect(await store.get(operation(13).hash, { allowlistOnly: true })).toBeUndefined();
    expect(await store.get(operation(13).hash)).toMatchObject({ source: 'apq' });
  });

  it('importing an operation registered by APQ makes it an allowlist row', async () => {
    const store = createPersistedStore({ db: database.db });
    const op = operation(20);
    await store.register(op.hash, op.query);
    expect(await store.importAllowlist([op])).toEqual({ added: 1, unchanged: 0 });
    expect(await createPersistedStore({ db: database.db }).get(op.hash, { allowlistOnly: true })).toMatchObject({ source: 'allowlist' });
  });

  it('without a database it is a bounded LRU in memory', async () => {
    const store = createPersistedStore({ maxRegistrations: 2 });
    for (const n of [1, 2, 3]) await store.register(operation(n).hash, operation(n).query);
    expect(await store.get(operation(1).hash)).toBeUndefined();
    expect(await store.get(operation(3).hash)).toBeDefined();
    expect(await store.count()).toEqual({ apq: 2, allowlist: 0 });
  });

  it('reads a held entry again after recheckSeconds: one removed elsewhere stops being served, one still there keeps its parsed document', async () => {
    let clock = 1_000_000;
    const store = createPersistedStore({ db: database.db, recheckSeconds: 10, now: () => clock });
    const kept = operation(30);
    const removed = operation(31);
    await store.importAllowlist([kept, removed]);
    const held = await store.get(kept.hash);
    held!.document = parse(kept.query);
    expect(await store.get(removed.hash)).toBeDefined();
    await database.db.delete(persistedOperations).where(eq(persistedOperations.hash, removed.hash));

    clock += 9_999;
    expect(await store.get(removed.hash)).toBeDefined(); // still held: not read again yet
    clock += 1;
    expect(await store.get(removed.hash)).toBeUndefined();
    expect((await store.get(kept.hash))?.document).toBe(held!.document);
  });
});
