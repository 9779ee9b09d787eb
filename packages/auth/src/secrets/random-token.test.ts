import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashToken, isRandomTokenShaped, randomToken } from './index.js';

describe('random tokens', () => {
  it('are 32 random bytes in base64url (43 characters) by default, another length on request, never repeated', () => {
    const tokens = Array.from({ length: 100 }, () => randomToken());
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set(tokens).size).toBe(tokens.length);
    expect(Buffer.from(tokens[0]!, 'base64url')).toHaveLength(32);
    expect(randomToken(16)).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('are told by shape: the exact length and the base64url alphabet, nothing else', () => {
    expect(isRandomTokenShaped(randomToken())).toBe(true);
    expect(isRandomTokenShaped(randomToken(16), 16)).toBe(true);
    expect(isRandomTokenShaped(randomToken(16))).toBe(false);
    expect(isRandomTokenShaped(`${randomToken()}A`)).toBe(false);
    expect(isRandomTokenShaped(`${randomToken().slice(1)}=`)).toBe(false);
    expect(isRandomTokenShaped(`${randomToken().slice(1)}+`)).toBe(false);
    expect(isRandomTokenShaped(undefined)).toBe(false);
    expect(isRandomTokenShaped(42)).toBe(false);
  });

  it('are stored as their SHA-256 in base64url', () => {
    const token = randomToken();
    expect(hashToken(token)).toBe(createHash('sha256').update(token).digest('base64url'));
  });
});
