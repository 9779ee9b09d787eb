import { oneTimeTokens, type Database } from '@latchkey/db';
import { hashToken, newTokenValue, normalizeUsername } from './token-hash.js';
import type { GeneratedOneTimeToken, GenerateRequest } from './types.js';

export const DEFAULT_TTL_SECONDS = 300;
/** A day at most: a longer-lived link is a standing credential. */
export const MAX_TTL_SECONDS = 86_400;

/**
 * Creates a single-use token for `username` and stores only its hash (spec One-time token login 1, 5, 6).
 * The caller decides whether the account exists and hands the token to delivery; the response to the client
 * must not depend on either (rule 3).
 */
export async function generateOneTimeToken(db: Database, request: GenerateRequest, now = new Date()): Promise<GeneratedOneTimeToken> {
  const ttlSeconds = request.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_TTL_SECONDS) {
    throw new RangeError(`ttlSeconds must be an integer from 1 to ${MAX_TTL_SECONDS}`);
  }
  const username = normalizeUsername(request.username);
  const token = newTokenValue();
  const expiresAt = new Date(now.getTime() + ttlSeconds * 1000);
  await db.insert(oneTimeTokens).values({ tokenHash: hashToken(token), username, expiresAt, createdAt: now });
  return { token, username, expiresAt };
}
