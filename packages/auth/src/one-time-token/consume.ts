import { oneTimeTokens, type Database } from '@latchkey/db';
import { eq, lt } from '@latchkey/db';
import { hashToken, isRandomTokenShaped } from '../secrets/index.js';
import type { ConsumedOneTimeToken } from './types.js';

/**
 * Uses a token up: one DELETE ... RETURNING, so of any number of concurrent submissions of the same token
 * exactly one gets the row (single use). An expired token is removed too and signs nobody in. Anything that
 * is not shaped like a token never reaches the database.
 */
export async function consumeOneTimeToken(db: Database, token: string, now = new Date()): Promise<ConsumedOneTimeToken | null> {
  if (!isRandomTokenShaped(token)) return null;
  const [row] = await db
    .delete(oneTimeTokens)
    .where(eq(oneTimeTokens.tokenHash, hashToken(token)))
    .returning({ username: oneTimeTokens.username, expiresAt: oneTimeTokens.expiresAt });
  if (!row || row.expiresAt.getTime() <= now.getTime()) return null;
  return { username: row.username };
}

/** Removes expired tokens; returns how many. Run it periodically (expiry is also checked on every consume). */
export async function purgeExpiredOneTimeTokens(db: Database, now = new Date()): Promise<number> {
  const removed = await db.delete(oneTimeTokens).where(lt(oneTimeTokens.expiresAt, now)).returning({ tokenHash: oneTimeTokens.tokenHash });
  return removed.length;
}
