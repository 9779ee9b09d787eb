import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * DPoP proofs already used at the API (RFC 9449 section 11.1): a proof's `jti` is accepted once by all instances
 * together. Keyed by a hash of (key thumbprint, jti); a row lives as long as its proof could still be accepted.
 */
export const dpopProofUses = pgTable(
  'dpop_proof_uses',
  {
    key: text('key').primaryKey(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [index('dpop_proof_uses_expires_idx').on(t.expiresAt)],
);
