import { and, asc, eq, federatedIdentities, users, type Database } from '@latchkey/db';
import { UpstreamError } from './errors.js';

/** An upstream identity linked to an account: the pair (issuer, subject) of its ID tokens. */
export interface FederatedIdentity {
  issuer: string;
  subject: string;
  userId: string;
}

/** A linked identity as its owner sees it. */
export interface LinkedIdentitySummary {
  issuer: string;
  subject: string;
  createdAt: Date;
}

/** OpenID Connect: `sub` is at most 255 ASCII characters; issuers are URLs (kept well within a URL limit). */
const MAX_SUBJECT = 255;
const MAX_ISSUER = 2048;
const PRINTABLE = /^[\x21-\x7e]+$/;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether (issuer, subject) is a pair that can be stored: non-empty printable ASCII of bounded length. */
export function isFederatedIdentityShaped(issuer: unknown, subject: unknown): boolean {
  return (
    typeof issuer === 'string' &&
    typeof subject === 'string' &&
    issuer.length <= MAX_ISSUER &&
    subject.length <= MAX_SUBJECT &&
    PRINTABLE.test(issuer) &&
    PRINTABLE.test(subject)
  );
}

/**
 * Links the upstream identity (issuer, subject) to `userId`. Accounts are linked by this pair only, never by
 * an e-mail address the upstream provider reports. Idempotent for the same account ('already-linked'); a pair
 * linked to another account is refused (UPSTREAM_LINKED_ELSEWHERE) and changes nothing.
 */
export async function linkFederatedIdentity(db: Database, identity: FederatedIdentity): Promise<'linked' | 'already-linked'> {
  if (!isFederatedIdentityShaped(identity.issuer, identity.subject) || !UUID.test(identity.userId))
    throw new UpstreamError('UPSTREAM_IDENTITY_INVALID');
  const inserted = await db
    .insert(federatedIdentities)
    .values({ issuer: identity.issuer, subject: identity.subject, userId: identity.userId })
    .onConflictDoNothing()
    .returning({ userId: federatedIdentities.userId });
  if (inserted.length > 0) return 'linked';
  const owner = await linkedUserId(db, identity.issuer, identity.subject);
  if (owner === identity.userId) return 'already-linked';
  throw new UpstreamError('UPSTREAM_LINKED_ELSEWHERE');
}

async function linkedUserId(db: Database, issuer: string, subject: string): Promise<string | null> {
  const [row] = await db
    .select({ userId: federatedIdentities.userId })
    .from(federatedIdentities)
    .where(and(eq(federatedIdentities.issuer, issuer), eq(federatedIdentities.subject, subject)))
    .limit(1);
  return row?.userId ?? null;
}

/**
 * The account linked to the upstream identity (issuer, subject), or null: none is linked, the pair is not
 * storable, or the account is suspended. Never looks at e-mail addresses.
 */
export async function findLinkedUser(db: Database, issuer: string, subject: string): Promise<string | null> {
  if (!isFederatedIdentityShaped(issuer, subject)) return null;
  const [row] = await db
    .select({ userId: users.id, suspended: users.suspended })
    .from(federatedIdentities)
    .innerJoin(users, eq(users.id, federatedIdentities.userId))
    .where(and(eq(federatedIdentities.issuer, issuer), eq(federatedIdentities.subject, subject)))
    .limit(1);
  return row && !row.suspended ? row.userId : null;
}

/** Removes the link (issuer, subject) of `userId`; false when that account has no such link. */
export async function unlinkFederatedIdentity(db: Database, identity: FederatedIdentity): Promise<boolean> {
  if (!isFederatedIdentityShaped(identity.issuer, identity.subject) || !UUID.test(identity.userId)) return false;
  const removed = await db
    .delete(federatedIdentities)
    .where(
      and(
        eq(federatedIdentities.issuer, identity.issuer),
        eq(federatedIdentities.subject, identity.subject),
        eq(federatedIdentities.userId, identity.userId),
      ),
    )
    .returning({ subject: federatedIdentities.subject });
  return removed.length > 0;
}

/** The upstream identities linked to `userId`, oldest first. */
export async function listFederatedIdentities(db: Database, userId: string): Promise<LinkedIdentitySummary[]> {
  if (!UUID.test(userId)) return [];
  return db
    .select({ issuer: federatedIdentities.issuer, subject: federatedIdentities.subject, createdAt: federatedIdentities.createdAt })
    .from(federatedIdentities)
    .where(eq(federatedIdentities.userId, userId))
    .orderBy(asc(federatedIdentities.createdAt), asc(federatedIdentities.subject));
}
