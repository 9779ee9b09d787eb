import { oneTimeTokens, type Database } from '@latchkey/db';
import { and, eq, lt } from '@latchkey/db';
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

/**
 * Uses a token up only in the browser that asked for it (BIND_LINKS_TO_BROWSER, OWASP ASVS 6.6.2): the row must
 * carry this browser's binding. Opened anywhere else, a live token answers `'another-browser'` and stays unused,
 * so the person can still type the message's code, or open the link, in the browser that asked. A token whose code
 * was stopped (its binding dropped after too many wrong codes) is used up by no browser: ask for a new one.
 */
export async function consumeOneTimeTokenInBrowser(
  db: Database,
  token: string,
  binding: string | undefined,
  now = new Date(),
): Promise<ConsumedOneTimeToken | 'another-browser' | null> {
  if (!isRandomTokenShaped(token)) return null;
  const tokenHash = hashToken(token);
  if (binding !== undefined) {
    const [row] = await db
      .delete(oneTimeTokens)
      .where(and(eq(oneTimeTokens.tokenHash, tokenHash), eq(oneTimeTokens.bindingHash, hashToken(binding))))
      .returning({ username: oneTimeTokens.username, expiresAt: oneTimeTokens.expiresAt });
    if (row) return row.expiresAt.getTime() <= now.getTime() ? null : { username: row.username };
  }
  const [elsewhere] = await db
    .select({ expiresAt: oneTimeTokens.expiresAt })
    .from(oneTimeTokens)
    .where(eq(oneTimeTokens.tokenHash, tokenHash))
    .limit(1);
  return elsewhere && elsewhere.expiresAt.getTime() > now.getTime() ? 'another-browser' : null;
}

/** Removes expired tokens; returns how many. Run it periodically (expiry is also checked on every consume). */
export async function purgeExpiredOneTimeTokens(db: Database, now = new Date()): Promise<number> {
  const removed = await db.delete(oneTimeTokens).where(lt(oneTimeTokens.expiresAt, now)).returning({ tokenHash: oneTimeTokens.tokenHash });
  return removed.length;
}
