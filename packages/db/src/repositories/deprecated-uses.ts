import { desc, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { deprecatedUses, type DeprecatedUseRow } from '../schema/index.js';

/** One use of a deprecated coordinate by a client, at an instant. */
export interface DeprecatedUse {
  coordinate: string;
  client: string;
  usedAt: Date;
}

/**
 * Records the last use of each (coordinate, client) pair in one statement: a pair's time only moves forward, so
 * instances writing out of order never set it back.
 */
export async function recordDeprecatedUses(db: Database, uses: readonly DeprecatedUse[]): Promise<void> {
  if (uses.length === 0) return;
  await db
    .insert(deprecatedUses)
    .values(uses.map(({ coordinate, client, usedAt }) => ({ coordinate, client, lastUsedAt: usedAt })))
    .onConflictDoUpdate({
      target: [deprecatedUses.coordinate, deprecatedUses.client],
      set: { lastUsedAt: sql`greatest(${deprecatedUses.lastUsedAt}, excluded.last_used_at)` },
    });
}

/** Every recorded (coordinate, client) pair with its last use, most recent first. */
export function listDeprecatedUses(db: Database): Promise<DeprecatedUseRow[]> {
  return db.select().from(deprecatedUses).orderBy(desc(deprecatedUses.lastUsedAt));
}
