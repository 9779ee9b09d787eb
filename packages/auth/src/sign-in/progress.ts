import { eq, lt, signInProgress, type Database } from '@latchkey/db';
import type { Factor, FactorGrant } from '../factors/types.js';
import { hashToken, isRandomTokenShaped, randomToken } from '../secrets/index.js';

/** How long a browser may take between two factors of one sign-in. */
export const PROGRESS_TTL_SECONDS = 600;

/** A sign-in in progress: whose, and the factors proven so far. */
export interface SignInProgress {
  userId: string;
  factors: FactorGrant[];
}

/** Adds a grant, replacing an older grant of the same factor (the newer proof is the one that counts). */
export function withGrant(factors: readonly FactorGrant[], grant: FactorGrant): FactorGrant[] {
  return [...factors.filter((held) => held.factor !== grant.factor), grant];
}

/**
 * Takes this browser's sign-in in progress out of storage (single use: one DELETE ... RETURNING, so two
 * concurrent requests cannot both continue it). Null when there is none, or it has expired.
 */
export async function takeSignInProgress(db: Database, progressId: string | undefined, now = new Date()): Promise<SignInProgress | null> {
  if (!isRandomTokenShaped(progressId)) return null;
  const [row] = await db
    .delete(signInProgress)
    .where(eq(signInProgress.idHash, hashToken(progressId)))
    .returning();
  if (!row || row.expiresAt.getTime() <= now.getTime()) return null;
  return { userId: row.userId, factors: row.factors as FactorGrant[] };
}

/**
 * Records that `userId` proved `factor` in this browser: continues the browser's sign-in in progress when it is
 * the same account's, and starts afresh otherwise (factors of one person never count for another). Every step
 * gets a new id, so an id seen once is worth nothing later. Returns the new id and the factors now held.
 */
export async function recordFactor(
  db: Database,
  request: { progressId?: string; userId: string; factor: Factor; seed?: readonly FactorGrant[] },
  now = new Date(),
): Promise<{ progressId: string } & SignInProgress> {
  const previous = await takeSignInProgress(db, request.progressId, now);
  const base = previous && previous.userId === request.userId ? previous.factors : (request.seed ?? []);
  const factors = withGrant(base, { factor: request.factor, issuedAt: Math.floor(now.getTime() / 1000) });
  const progressId = await saveSignInProgress(db, { userId: request.userId, factors }, now);
  return { progressId, userId: request.userId, factors };
}

/** Stores a sign-in in progress under a new random id (returned; only its hash is stored). */
export async function saveSignInProgress(db: Database, progress: SignInProgress, now = new Date()): Promise<string> {
  const progressId = randomToken();
  await db.insert(signInProgress).values({
    idHash: hashToken(progressId),
    userId: progress.userId,
    factors: progress.factors,
    expiresAt: new Date(now.getTime() + PROGRESS_TTL_SECONDS * 1000),
    createdAt: now,
  });
  return progressId;
}

/** Reads this browser's sign-in in progress without using it up (for showing what is still needed). */
export async function readSignInProgress(db: Database, progressId: string | undefined, now = new Date()): Promise<SignInProgress | null> {
  if (!isRandomTokenShaped(progressId)) return null;
  const [row] = await db
    .select()
    .from(signInProgress)
    .where(eq(signInProgress.idHash, hashToken(progressId)))
    .limit(1);
  if (!row || row.expiresAt.getTime() <= now.getTime()) return null;
  return { userId: row.userId, factors: row.factors as FactorGrant[] };
}

export async function purgeExpiredSignInProgress(db: Database, now = new Date()): Promise<number> {
  const removed = await db.delete(signInProgress).where(lt(signInProgress.expiresAt, now)).returning({ idHash: signInProgress.idHash });
  return removed.length;
}
