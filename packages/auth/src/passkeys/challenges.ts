import { timingSafeEqual } from 'node:crypto';
import { eq, lt, webauthnChallenges, type Database } from '@latchkey/db';
import { hashToken, isRandomTokenShaped, randomToken } from '../secrets/index.js';
import { PasskeyError } from './errors.js';

export const DEFAULT_CHALLENGE_TTL_SECONDS = 300;
/** Ten minutes at most: the ceremony is a moment of user interaction, not a standing grant. */
export const MAX_CHALLENGE_TTL_SECONDS = 600;

export type ChallengePurpose = 'registration' | 'authentication';

export function checkTtl(ttlSeconds: number): void {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_CHALLENGE_TTL_SECONDS) {
    throw new RangeError(`ttlSeconds must be an integer from 1 to ${MAX_CHALLENGE_TTL_SECONDS}`);
  }
}

/**
 * The binding (a session id) is a bearer secret of its own: the table keeps a SHA-256 of it, enough to
 * compare and useless to whoever reads the table.
 */
export function hashBinding(binding: string): string {
  if (typeof binding !== 'string' || binding.length === 0) throw new TypeError('binding must be a non-empty string');
  return hashToken(binding);
}

export interface StoreChallenge {
  challenge: string;
  purpose: ChallengePurpose;
  binding: string;
  ttlSeconds: number;
  userId?: string;
  userHandle?: string;
}

/** Records a challenge just handed out. The database, not process memory, so any instance can finish. */
export async function storeChallenge(db: Database, input: StoreChallenge, now: Date): Promise<void> {
  await db.insert(webauthnChallenges).values({
    id: randomToken(16),
    challenge: input.challenge,
    purpose: input.purpose,
    userId: input.userId ?? null,
    userHandle: input.userHandle ?? null,
    bindingHash: hashBinding(input.binding),
    expiresAt: new Date(now.getTime() + input.ttlSeconds * 1000),
    createdAt: now,
  });
}

export interface ConsumedChallenge {
  challenge: string;
  userId: string | null;
  userHandle: string | null;
}

/**
 * Takes the challenge a response answers out of the database: one DELETE ... RETURNING, so of any number of
 * concurrent submissions exactly one gets the row. The row is gone whatever happens next: a response that
 * comes back with the wrong binding, purpose or user, too late, or that fails verification afterwards has
 * used the challenge up, and the user starts over. The challenge is read from the response's
 * clientDataJSON (the signed data); the library checks it against the returned value again.
 */
export async function consumeChallenge(
  db: Database,
  expected: { purpose: ChallengePurpose; binding: string; userId?: string },
  clientDataJSON: unknown,
  now: Date,
): Promise<ConsumedChallenge> {
  const bindingHash = hashBinding(expected.binding);
  const challenge = challengeOf(clientDataJSON);
  if (!challenge) throw new PasskeyError('PASSKEY_CHALLENGE_INVALID');
  const [row] = await db.delete(webauthnChallenges).where(eq(webauthnChallenges.challenge, challenge)).returning();
  if (
    !row ||
    row.expiresAt.getTime() <= now.getTime() ||
    row.purpose !== expected.purpose ||
    !sameHash(row.bindingHash, bindingHash) ||
    (expected.userId !== undefined && row.userId !== expected.userId)
  ) {
    throw new PasskeyError('PASSKEY_CHALLENGE_INVALID');
  }
  return { challenge: row.challenge, userId: row.userId, userHandle: row.userHandle };
}

/** The challenge inside a base64url clientDataJSON, if it has the shape of one of ours. */
function challengeOf(clientDataJSON: unknown): string | null {
  if (typeof clientDataJSON !== 'string' || clientDataJSON.length > 4096) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
    const challenge = (parsed as { challenge?: unknown } | null)?.challenge;
    // Ours are 32 random bytes (start-registration, start-authentication): base64url, 43 characters.
    return isRandomTokenShaped(challenge) ? challenge : null;
  } catch {
    return null;
  }
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Removes expired challenges; returns how many. Run it periodically (expiry is also checked on every use). */
export async function purgeExpiredWebAuthnChallenges(db: Database, now = new Date()): Promise<number> {
  const removed = await db.delete(webauthnChallenges).where(lt(webauthnChallenges.expiresAt, now)).returning({ id: webauthnChallenges.id });
  return removed.length;
}
