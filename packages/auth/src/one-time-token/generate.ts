import { oneTimeTokens, type Database } from '@latchkey/db';
import { hashToken, randomToken } from '../secrets/index.js';
import { hashShortCode, isCodeBindingShaped, newShortCode } from './short-code.js';
import type { GeneratedOneTimeToken, GenerateRequest } from './types.js';
import { normalizeUsername } from './username.js';

export const DEFAULT_TTL_SECONDS = 300;
/** A day at most: a longer-lived link is a standing credential. */
export const MAX_TTL_SECONDS = 86_400;

/**
 * Creates a single-use token for `username` and stores only its hash (spec One-time token login 1, 5, 6).
 * The caller decides whether the account exists and hands the token to delivery; the response to the client
 * must not depend on either (rule 3).
 */
export async function generateOneTimeToken(db: Database, request: GenerateRequest, now = new Date()): Promise<GeneratedOneTimeToken> {
  return insertToken(db, request, undefined, now);
}

/**
 * Like generateOneTimeToken, plus a 6-digit code on the same row: a second way of presenting the same
 * credential, usable only from the browser that holds `binding` (see consumeShortCode). Using either the
 * link or the code uses up both. The code, like the token, goes into the delivered message only.
 */
export async function generateOneTimeTokenWithCode(
  db: Database,
  request: GenerateRequest,
  binding: string,
  now = new Date(),
): Promise<GeneratedOneTimeToken & { code: string }> {
  if (!isCodeBindingShaped(binding)) throw new TypeError('binding must be 32 random bytes, base64url');
  const generated = await insertToken(db, request, binding, now);
  return { ...generated, code: generated.code! };
}

async function insertToken(
  db: Database,
  request: GenerateRequest,
  binding: string | undefined,
  now: Date,
): Promise<GeneratedOneTimeToken & { code?: string }> {
  const ttlSeconds = request.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_TTL_SECONDS) {
    throw new RangeError(`ttlSeconds must be an integer from 1 to ${MAX_TTL_SECONDS}`);
  }
  const username = normalizeUsername(request.username);
  const token = randomToken();
  const tokenHash = hashToken(token);
  const expiresAt = new Date(now.getTime() + ttlSeconds * 1000);
  if (binding === undefined) {
    await db.insert(oneTimeTokens).values({ tokenHash, username, expiresAt, createdAt: now });
    return { token, username, expiresAt };
  }
  const code = newShortCode();
  await db.insert(oneTimeTokens).values({
    tokenHash,
    username,
    expiresAt,
    createdAt: now,
    codeHash: hashShortCode(binding, tokenHash, username, code),
    bindingHash: hashToken(binding),
  });
  return { token, code, username, expiresAt };
}
