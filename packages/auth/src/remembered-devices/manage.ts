import { and, desc, eq, gt, rememberedDevices, type Database } from '@latchkey/db';
import { hashToken, isRandomTokenShaped } from '../secrets/index.js';

export interface RememberedDevice {
  id: string;
  label: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date;
  /** the browser asking is this one */
  current: boolean;
}

/** The account's live remembered browsers, newest first; `currentToken` marks the asking browser's own. */
export async function listRememberedDevices(
  db: Database,
  userId: string,
  currentToken?: string,
  now = new Date(),
): Promise<RememberedDevice[]> {
  const rows = await db
    .select()
    .from(rememberedDevices)
    .where(and(eq(rememberedDevices.userId, userId), gt(rememberedDevices.expiresAt, now)))
    .orderBy(desc(rememberedDevices.createdAt));
  const currentHash = isRandomTokenShaped(currentToken) ? hashToken(currentToken) : undefined;
  return rows.map((row) => ({
    id: row.id,
    label: row.label,
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
    expiresAt: row.expiresAt,
    current: row.tokenHash === currentHash,
  }));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Forgets one of the account's remembered browsers; false when the account has none with this id. */
export async function revokeRememberedDevice(db: Database, userId: string, id: string): Promise<boolean> {
  if (!UUID.test(id)) return false;
  const removed = await db
    .delete(rememberedDevices)
    .where(and(eq(rememberedDevices.id, id), eq(rememberedDevices.userId, userId)))
    .returning({ id: rememberedDevices.id });
  return removed.length > 0;
}
