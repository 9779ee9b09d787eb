import { rememberedDevices, type Database } from '@latchkey/db';
import { hashToken, randomToken } from '../secrets/index.js';

/** How long a browser is remembered. @default 30 days */
export const DEFAULT_REMEMBER_DAYS = 30;

/**
 * Remembers this browser for `userId` (spec Multi-factor rules 5): a random token for an HttpOnly cookie,
 * stored only as a hash, with a label the owner recognises (from the browser's User-Agent) and an expiry.
 * Returns the token (for the cookie only) and when it expires.
 */
export async function rememberDevice(
  db: Database,
  request: { userId: string; label: string; days?: number },
  now = new Date(),
): Promise<{ token: string; expiresAt: Date }> {
  const token = randomToken();
  const expiresAt = new Date(now.getTime() + (request.days ?? DEFAULT_REMEMBER_DAYS) * 86_400_000);
  const label =
    request.label
      .replace(/\p{Cc}/gu, ' ')
      .trim()
      .slice(0, 120) || 'A browser';
  await db.insert(rememberedDevices).values({ userId: request.userId, tokenHash: hashToken(token), label, createdAt: now, expiresAt });
  return { token, expiresAt };
}
