import { and, eq, gt, rememberedDevices, type Database } from '@latchkey/db';
import { hashToken, isRandomTokenShaped } from '../secrets/index.js';

/** Whether this browser's token is a live remembered device of `userId` (and notes its use). */
export async function isRememberedDevice(db: Database, userId: string, token: string | undefined, now = new Date()): Promise<boolean> {
  if (!isRandomTokenShaped(token)) return false;
  const used = await db
    .update(rememberedDevices)
    .set({ lastUsedAt: now })
    .where(
      and(eq(rememberedDevices.tokenHash, hashToken(token)), eq(rememberedDevices.userId, userId), gt(rememberedDevices.expiresAt, now)),
    )
    .returning({ id: rememberedDevices.id });
  return used.length > 0;
}
