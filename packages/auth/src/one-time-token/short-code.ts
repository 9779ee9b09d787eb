import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { and, eq, gt, isNotNull, lt, oneTimeTokens, sql, type Database, type SQL } from '@latchkey/db';
import { hashToken, isRandomTokenShaped, randomToken } from '../secrets/index.js';
import type { ConsumedOneTimeToken } from './types.js';
import { normalizeUsername } from './username.js';

/** Six decimal digits. */
export const SHORT_CODE_DIGITS = 6;
const SHORT_CODE_FORMAT = /^[0-9]{6}$/;
/**
 * Guesses a code may take, right or wrong; the one that reaches it is the code's last. Counted in the database,
 * so it holds across instances, restarts and any number of concurrent submissions.
 */
export const SHORT_CODE_ATTEMPTS = 5;

/** A fresh code: uniform over 000000..999999 (CSPRNG). */
export function newShortCode(): string {
  return String(randomInt(0, 10 ** SHORT_CODE_DIGITS)).padStart(SHORT_CODE_DIGITS, '0');
}

export function isShortCodeShaped(value: string): boolean {
  return SHORT_CODE_FORMAT.test(value);
}

/**
 * A fresh binding value for a browser: a random token like the sign-in token itself, kept in that browser's
 * HttpOnly cookie and stored here only hashed (`hashToken`).
 */
export function newCodeBinding(): string {
  return randomToken();
}

export function isCodeBindingShaped(value: string): boolean {
  return isRandomTokenShaped(value);
}

/**
 * What the table keeps of a code. A million codes are easily tried offline against a plain hash, so the hash is
 * an HMAC keyed by the browser's binding value, which exists in that browser's HttpOnly cookie only (the table
 * has its SHA-256): a stolen table yields no code. The row's token hash and the username are part of the input,
 * so equal codes on two rows never hash alike and a code is only ever good for its own row and account.
 */
export function hashShortCode(binding: string, tokenHash: string, username: string, code: string): string {
  return createHmac('sha256', binding).update(`latchkey short code v1\0${tokenHash}\0${username}\0${code}`).digest('base64url');
}

/**
 * Uses a token up through its short code, presented by the browser the code is bound to. Each call is one guess
 * at every live code of this username and browser (without a username: of this browser, whatever address it
 * asked for; the page's one field sends no address): one UPDATE counts it before anything is compared, and only
 * rows still under SHORT_CODE_ATTEMPTS take part, so no number of concurrent guesses gets past the budget. A
 * matching row is then deleted (the link dies with it); of concurrent right guesses exactly one deletes it. A row
 * whose budget this guess used up has its code nulled: the code dies, the magic link of the same row does not,
 * so nobody guessing codes can take the link away from its owner. Without the binding nothing is looked up at
 * all: a stranger cannot use, or use up, a code asked for in someone else's browser.
 */
export async function consumeShortCode(
  db: Database,
  presented: { username?: string; code: string; binding: string },
  now = new Date(),
): Promise<ConsumedOneTimeToken | null> {
  if (!isShortCodeShaped(presented.code) || !isCodeBindingShaped(presented.binding)) return null;
  const username = presented.username === undefined ? undefined : normalizeUsername(presented.username);
  const candidates = await db
    .update(oneTimeTokens)
    .set({ codeAttempts: sql`${oneTimeTokens.codeAttempts} + 1` })
    .where(
      and(
        username === undefined ? undefined : eq(oneTimeTokens.username, username),
        eq(oneTimeTokens.bindingHash, hashToken(presented.binding)),
        isNotNull(oneTimeTokens.codeHash),
        lt(oneTimeTokens.codeAttempts, SHORT_CODE_ATTEMPTS),
        gt(oneTimeTokens.expiresAt, now),
      ),
    )
    .returning({
      tokenHash: oneTimeTokens.tokenHash,
      username: oneTimeTokens.username,
      codeHash: oneTimeTokens.codeHash,
      codeAttempts: oneTimeTokens.codeAttempts,
    });
  let consumed: ConsumedOneTimeToken | null = null;
  const spent: string[] = [];
  for (const candidate of candidates) {
    const expected = Buffer.from(hashShortCode(presented.binding, candidate.tokenHash, candidate.username, presented.code));
    const stored = Buffer.from(candidate.codeHash ?? '');
    if (!consumed && stored.length === expected.length && timingSafeEqual(stored, expected)) {
      const [row] = await db
        .delete(oneTimeTokens)
        .where(eq(oneTimeTokens.tokenHash, candidate.tokenHash))
        .returning({ username: oneTimeTokens.username });
      if (row) consumed = { username: row.username };
    } else if (candidate.codeAttempts >= SHORT_CODE_ATTEMPTS) {
      spent.push(candidate.tokenHash);
    }
  }
  for (const tokenHash of spent) await killCodes(db, eq(oneTimeTokens.tokenHash, tokenHash));
  return consumed;
}

/**
 * Kills every outstanding code bound to this browser (e.g. once its source has been stopped for sending wrong
 * codes or tokens); their magic links stay valid. Returns how many codes died.
 */
export async function revokeShortCodes(db: Database, binding: string): Promise<number> {
  if (!isCodeBindingShaped(binding)) return 0;
  return killCodes(db, eq(oneTimeTokens.bindingHash, hashToken(binding)));
}

async function killCodes(db: Database, where: SQL): Promise<number> {
  const killed = await db
    .update(oneTimeTokens)
    .set({ codeHash: null, bindingHash: null })
    .where(and(where, isNotNull(oneTimeTokens.codeHash)))
    .returning({ tokenHash: oneTimeTokens.tokenHash });
  return killed.length;
}
