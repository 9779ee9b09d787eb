import { eq, oidcModels, sql } from '@latchkey/db';
import { beforeEach } from 'vitest';
import { createDrizzleAdapter, type OidcAdapter } from '../index.js';
import { database, useOwnDatabase } from './own-database.js';

export { database };

/**
 * The real database for the OpenID provider's storage: PostgreSQL (a database of its own) when DATABASE_URL is
 * set, else PGlite on disk; opened before this file's tests, its oidc_models table emptied before each.
 */
export function useOidcDatabase(): void {
  useOwnDatabase('oidc');
  beforeEach(async () => {
    await database.db.delete(oidcModels);
  });
}

/** The Drizzle adapter of one oidc-provider model on this file's database. */
export function adapterFor(model: string, now?: () => number): OidcAdapter {
  const Adapter = createDrizzleAdapter(database.db, { now });
  return new Adapter(model);
}

/** What oidc_models holds (of one model, or all), with the jsonb type of each payload. */
export async function storedRows(model?: string) {
  const rows = await database.db
    .select({
      model: oidcModels.model,
      id: oidcModels.id,
      grantId: oidcModels.grantId,
      type: sql<string>`jsonb_typeof(${oidcModels.payload})`,
    })
    .from(oidcModels)
    .where(model ? eq(oidcModels.model, model) : undefined)
    .orderBy(oidcModels.model, oidcModels.id);
  return rows;
}
