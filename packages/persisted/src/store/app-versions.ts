import {
  and,
  asc,
  count,
  eq,
  inArray,
  isNull,
  ne,
  persistedAppDocuments,
  persistedAppVersions,
  persistedOperations,
  sql,
  type Database,
} from '@latchkey/db';
import { definedErrors } from '@latchkey/errors';

/** The app of documents imported without `--app`, and its one version. */
export const UNNAMED_APP = 'unnamed';
export const UNNAMED_VERSION = '-';

/** An app and one of its versions, as `persisted import --app NAME --version VERSION` names them. */
export interface AppVersion {
  app: string;
  version: string;
}

/** One app version as `persisted apps` lists it. */
export interface AppVersionSummary extends AppVersion {
  documents: number;
  importedAt: Date;
  /** the latest use of any of its documents (null: none used since it was imported) */
  lastUsedAt: Date | null;
  retiredAt: Date | null;
}

const describe = ({ app, version }: AppVersion) => `${app} ${version}`;

export const APP_VERSION_ERRORS = {
  APP_VERSION_EXISTS: (version: AppVersion) =>
    `${describe(version)} is already imported with other documents: an app version's documents never change (import them as a new version)`,
  APP_VERSION_RETIRED: (version: AppVersion) => `${describe(version)} was retired: import its documents as a new version`,
  APP_VERSION_UNKNOWN: (version: AppVersion) => `there is no app version ${describe(version)} (persisted apps lists them)`,
} as const;

/** An import or a retirement the app versions refuse (nothing was changed). */
export class AppVersionError extends definedErrors('AppVersionError', APP_VERSION_ERRORS) {}

const ofVersion = ({ app, version }: AppVersion) => and(eq(persistedAppDocuments.app, app), eq(persistedAppDocuments.version, version));
const isVersion = ({ app, version }: AppVersion) => and(eq(persistedAppVersions.app, app), eq(persistedAppVersions.version, version));
/** A document row's app version (the join of the two tables). */
const versionOfDocument = and(
  eq(persistedAppVersions.app, persistedAppDocuments.app),
  eq(persistedAppVersions.version, persistedAppDocuments.version),
);

/** The app version's row, locked for the rest of the transaction; undefined when there is none. */
async function lockVersion(tx: Database, version: AppVersion): Promise<{ retiredAt: Date | null } | undefined> {
  const [row] = await tx
    .select({ retiredAt: persistedAppVersions.retiredAt })
    .from(persistedAppVersions)
    .where(isVersion(version))
    .for('update');
  return row;
}

/** Writes allowlist rows, 500 a statement; resolves to the rows added or made allowlist rows (an APQ row of the same hash is). */
async function writeAllowlist(tx: Database, entries: readonly { hash: string; query: string }[]): Promise<number> {
  let added = 0;
  for (let start = 0; start < entries.length; start += 500) {
    const batch = entries.slice(start, start + 500);
    const changed = await tx
      .insert(persistedOperations)
      .values(batch.map(({ hash, query }) => ({ hash, query, source: 'allowlist' as const })))
      .onConflictDoUpdate({
        target: persistedOperations.hash,
        set: { source: 'allowlist', query: sql`excluded.query` },
        setWhere: sql`${persistedOperations.source} <> 'allowlist'`,
      })
      .returning({ hash: persistedOperations.hash });
    added += changed.length;
  }
  return added;
}

/** Lists which documents an app version holds, 500 a statement (a document it already lists is skipped). */
async function linkDocuments(tx: Database, version: AppVersion, hashes: readonly string[]): Promise<void> {
  for (let start = 0; start < hashes.length; start += 500) {
    const batch = hashes.slice(start, start + 500);
    await tx
      .insert(persistedAppDocuments)
      .values(batch.map((hash) => ({ ...version, hash })))
      .onConflictDoNothing();
  }
}

/**
 * Imports a manifest's documents as the app version's, in one transaction: each document is stored once, however
 * many versions hold it. A version's documents never change: importing a version that exists with other documents
 * (or was retired) is refused with nothing written, and importing it again with the same documents changes nothing.
 * The `unnamed` app (imports without `--app`) keeps the older meaning: each import adds to its one version.
 */
export function importAppVersion(
  db: Database,
  entries: readonly { hash: string; query: string }[],
  version: AppVersion,
): Promise<{ added: number; unchanged: number }> {
  const unnamed = version.app === UNNAMED_APP;
  const hashes = entries.map((entry) => entry.hash);
  return db.transaction(async (tx) => {
    const existing = await lockVersion(tx, version);
    if (existing && !unnamed) {
      if (existing.retiredAt) throw new AppVersionError('APP_VERSION_RETIRED', version);
      const held = await tx.select({ hash: persistedAppDocuments.hash }).from(persistedAppDocuments).where(ofVersion(version));
      const same = held.length === hashes.length && held.every((row) => hashes.includes(row.hash));
      if (!same) throw new AppVersionError('APP_VERSION_EXISTS', version);
    }
    if (!existing) await tx.insert(persistedAppVersions).values(version);
    else if (unnamed) await tx.update(persistedAppVersions).set({ retiredAt: null }).where(eq(persistedAppVersions.app, UNNAMED_APP));
    const added = await writeAllowlist(tx, entries);
    await linkDocuments(tx, version, hashes);
    return { added, unchanged: entries.length - added };
  });
}

/**
 * Retires an app version, in one transaction: it stays listed (with its documents, as history), and every document
 * it held leaves the allowlist unless an active version still holds it. Resolves to how many left and how many
 * stayed; a version retired before changes nothing. An unknown version is refused (APP_VERSION_UNKNOWN).
 */
export function retireAppVersion(db: Database, version: AppVersion): Promise<{ removed: string[]; kept: number; alreadyRetired: boolean }> {
  return db.transaction(async (tx) => {
    const existing = await lockVersion(tx, version);
    if (!existing) throw new AppVersionError('APP_VERSION_UNKNOWN', version);
    if (existing.retiredAt) return { removed: [], kept: 0, alreadyRetired: true };
    await tx.update(persistedAppVersions).set({ retiredAt: sql`now()` }).where(isVersion(version));
    const held = tx.select({ hash: persistedAppDocuments.hash }).from(persistedAppDocuments).where(ofVersion(version));
    const stillActive = tx
      .select({ hash: persistedAppDocuments.hash })
      .from(persistedAppDocuments)
      .innerJoin(persistedAppVersions, versionOfDocument)
      .where(isNull(persistedAppVersions.retiredAt));
    const removed = await tx
      .delete(persistedOperations)
      .where(
        and(
          eq(persistedOperations.source, 'allowlist'),
          inArray(persistedOperations.hash, held),
          sql`${persistedOperations.hash} not in (${stillActive})`,
        ),
      )
      .returning({ hash: persistedOperations.hash });
    const [total] = await tx.select({ n: count() }).from(persistedAppDocuments).where(ofVersion(version));
    return { removed: removed.map((row) => row.hash), kept: Number(total?.n ?? 0) - removed.length, alreadyRetired: false };
  });
}

/**
 * Every app version, by app and import time, with its document count and the latest use of its documents. A
 * document's use is not told apart by version: one shared by two versions shows its last use in both.
 */
export async function listAppVersions(db: Database): Promise<AppVersionSummary[]> {
  const rows = await db
    .select({
      app: persistedAppVersions.app,
      version: persistedAppVersions.version,
      importedAt: persistedAppVersions.importedAt,
      retiredAt: persistedAppVersions.retiredAt,
      documents: sql<number>`count(${persistedAppDocuments.hash})::int`,
      lastUsedAt: sql<Date | null>`max(${lastUse})`,
    })
    .from(persistedAppVersions)
    .leftJoin(persistedAppDocuments, versionOfDocument)
    .leftJoin(persistedOperations, eq(persistedOperations.hash, persistedAppDocuments.hash))
    .groupBy(persistedAppVersions.app, persistedAppVersions.version)
    .orderBy(asc(persistedAppVersions.app), asc(persistedAppVersions.importedAt), asc(persistedAppVersions.version));
  return rows.map((row) => ({ ...row, lastUsedAt: row.lastUsedAt === null ? null : new Date(row.lastUsedAt) }));
}

/** A document an active app version holds, with its last use (null: not used since it was stored). */
export interface AppDocument extends AppVersion {
  hash: string;
  query: string;
  lastUsedAt: Date | null;
}

/** A row's last_used_at starts at its creation: only a later one is a use. */
const lastUse = sql<Date | null>`case when ${persistedOperations.lastUsedAt} > ${persistedOperations.createdAt} then ${persistedOperations.lastUsedAt} end`;

/** The documents of every active (not retired) app version: one row per version that holds a document. */
export async function listActiveAppDocuments(db: Database): Promise<AppDocument[]> {
  const rows = await db
    .select({
      app: persistedAppDocuments.app,
      version: persistedAppDocuments.version,
      hash: persistedOperations.hash,
      query: persistedOperations.query,
      lastUsedAt: lastUse,
    })
    .from(persistedAppDocuments)
    .innerJoin(persistedAppVersions, versionOfDocument)
    .innerJoin(persistedOperations, eq(persistedOperations.hash, persistedAppDocuments.hash))
    .where(isNull(persistedAppVersions.retiredAt))
    .orderBy(asc(persistedAppDocuments.app), asc(persistedAppDocuments.version), asc(persistedOperations.hash));
  return rows.map((row) => ({ ...row, lastUsedAt: row.lastUsedAt === null ? null : new Date(row.lastUsedAt) }));
}

/** The names of the apps imported with `--app` (retired versions included: their clients may still call). */
export async function listAppNames(db: Database): Promise<string[]> {
  const rows = await db
    .selectDistinct({ app: persistedAppVersions.app })
    .from(persistedAppVersions)
    .where(ne(persistedAppVersions.app, UNNAMED_APP))
    .orderBy(asc(persistedAppVersions.app));
  return rows.map((row) => row.app);
}
