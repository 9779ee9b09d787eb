import { and, eq, passkeys, type Database } from '@latchkey/db';
import { normalizeLabel, toSummary } from './summary.js';
import type { PasskeySummary } from './types.js';

/**
 * Sets a passkey's label (trimmed, 1 to 64 characters; otherwise PasskeyError PASSKEY_LABEL_INVALID).
 * Returns null when the account has no passkey with this id: someone else's passkey is not found either,
 * in the same single statement, so the answer does not tell the two apart.
 */
export async function renamePasskey(db: Database, userId: string, id: string, label: string): Promise<PasskeySummary | null> {
  const normalized = normalizeLabel(label);
  const [row] = await db
    .update(passkeys)
    .set({ label: normalized })
    .where(and(eq(passkeys.id, id), eq(passkeys.userId, userId)))
    .returning();
  return row ? toSummary(row) : null;
}
