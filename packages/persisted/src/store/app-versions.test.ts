import { persistedAppDocuments, persistedAppVersions, persistedOperations, type DatabaseHandle } from '@latchkey/db';
import { openOwnDatabase } from '@latchkey/db/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../document-id.js';
import { AppVersionError, listAppNames, listAppVersions, retireAppVersion } from './app-versions.js';
import { createPersistedStore } from './persisted-store.js';

let database: DatabaseHandle;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ database, close } = await openOwnDatabase('persisted_apps'));
});
afterAll(() => close?.());
beforeEach(async () => {
  await database.db.delete(persistedOperations);
  await database.db.delete(persistedAppVersions);
});

const documentOf = (name: string) => {
  const query = `query ${name} { status { version } }`;
  return { hash: sha256Hex(query), query };
};
const [a, b, c] = ['A', 'B', 'C'].map(documentOf) as [
  ReturnType<typeof documentOf>,
  ReturnType<typeof documentOf>,
  ReturnType<typeof documentOf>,
];
const v1 = { app: 'web', version: '1.0.0' };
const v2 = { app: 'web', version: '1.1.0' };

const storedHashes = async () =>
  (await database.db.select({ hash: persistedOperations.hash }).from(persistedOperations)).map((row) => row.hash).sort();
const links = async () =>
  (await database.db.select().from(persistedAppDocuments)).map((row) => `${row.app} ${row.version} ${row.hash}`).sort();
const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as AppVersionError,
  );

describe('app versions: which app and version each trusted document belongs to', () => {
  it('a document shared by two versions is stored once and belongs to each', async () => {
    const store = createPersistedStore({ db: database.db });
    expect(await store.importAllowlist([a, b], v1)).toEqual({ added: 2, unchanged: 0 });
    expect(await store.importAllowlist([b, c], v2)).toEqual({ added: 1, unchanged: 1 });
    expect(await storedHashes()).toEqual([a.hash, b.hash, c.hash].sort());
    expect(await links()).toEqual([`web 1.0.0 ${a.hash}`, `web 1.0.0 ${b.hash}`, `web 1.1.0 ${b.hash}`, `web 1.1.0 ${c.hash}`].sort());
    expect(
      (await listAppVersions(database.db)).map(({ app, version, documents, retiredAt }) => ({ app, version, documents, retiredAt })),
    ).toEqual([
      { app: 'web', version: '1.0.0', documents: 2, retiredAt: null },
      { app: 'web', version: '1.1.0', documents: 2, retiredAt: null },
    ]);
  });

  it('an app version is imported once: the same documents again change nothing, other documents are refused with nothing written', async () => {
    const store = createPersistedStore({ db: database.db });
    await store.importAllowlist([a, b], v1);
    expect(await store.importAllowlist([b, a], v1)).toEqual({ added: 0, unchanged: 2 });
    const refused = await refusal(store.importAllowlist([a, c], v1));
    expect(refused).toBeInstanceOf(AppVersionError);
    expect(refused?.code).toBe('APP_VERSION_EXISTS');
    expect(await storedHashes()).toEqual([a.hash, b.hash].sort());
    expect(await links()).toEqual([`web 1.0.0 ${a.hash}`, `web 1.0.0 ${b.hash}`].sort());
  });

  it('retiring a version removes its documents from the allowlist, except those another active version holds', async () => {
    const store = createPersistedStore({ db: database.db });
    await store.importAllowlist([a, b], v1);
    await store.importAllowlist([b, c], v2);
    expect(await retireAppVersion(database.db, v1)).toEqual({ removed: [a.hash], kept: 1, alreadyRetired: false });
    expect(await storedHashes()).toEqual([b.hash, c.hash].sort());
    const [retired] = await listAppVersions(database.db);
    expect(retired).toMatchObject({ ...v1, documents: 2 });
    expect(retired!.retiredAt).toBeInstanceOf(Date);

    expect(await retireAppVersion(database.db, v1)).toEqual({ removed: [], kept: 0, alreadyRetired: true });
    expect((await refusal(store.importAllowlist([a, b], v1)))?.code).toBe('APP_VERSION_RETIRED');
    expect(await retireAppVersion(database.db, v2)).toEqual({ removed: [b.hash, c.hash].sort(), kept: 0, alreadyRetired: false });
    expect(await storedHashes()).toEqual([]);
  });

  it('retiring a version that does not exist is refused and changes nothing', async () => {
    const store = createPersistedStore({ db: database.db });
    await store.importAllowlist([a], v1);
    expect((await refusal(retireAppVersion(database.db, { app: 'web', version: '9.9.9' })))?.code).toBe('APP_VERSION_UNKNOWN');
    expect((await refusal(retireAppVersion(database.db, { app: 'other', version: '1.0.0' })))?.code).toBe('APP_VERSION_UNKNOWN');
    expect(await storedHashes()).toEqual([a.hash]);
    expect((await listAppVersions(database.db))[0]!.retiredAt).toBeNull();
  });

  it('imports without an app add to the one version of the app `unnamed`, which is not an app name clients may give', async () => {
    const store = createPersistedStore({ db: database.db });
    await store.importAllowlist([a]);
    await store.importAllowlist([b]);
    await store.importAllowlist([c], v1);
    expect((await listAppVersions(database.db)).map(({ app, version, documents }) => `${app} ${version} ${documents}`)).toEqual([
      'unnamed - 2',
      'web 1.0.0 1',
    ]);
    expect(await listAppNames(database.db)).toEqual(['web']);
  });

  it('a version lists the last use of its documents, none until one is used', async () => {
    const store = createPersistedStore({ db: database.db });
    await store.importAllowlist([a], v1);
    expect((await listAppVersions(database.db))[0]!.lastUsedAt).toBeNull();
    await createPersistedStore({ db: database.db }).get(a.hash);
    expect((await listAppVersions(database.db))[0]!.lastUsedAt).toBeInstanceOf(Date);
  });
});
