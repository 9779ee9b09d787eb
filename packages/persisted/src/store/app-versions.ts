import { asc, ne, persistedAppVersions, type Database } from '@latchkey/db';

/** The app of documents imported without `--app`. */
export const UNNAMED_APP = 'unnamed';

/** The names of the apps imported with `--app` (retired versions included: their clients may still call). */
export async function listAppNames(db: Database): Promise<string[]> {
  const rows = await db
    .selectDistinct({ app: persistedAppVersions.app })
    .from(persistedAppVersions)
    .where(ne(persistedAppVersions.app, UNNAMED_APP))
    .orderBy(asc(persistedAppVersions.app));
  return rows.map((row) => row.app);
}
