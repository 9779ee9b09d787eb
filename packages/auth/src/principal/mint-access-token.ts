import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { SigningKey } from '../keys/key-material.js';
import { API_SCOPE_NAMES } from '../scopes/vocabulary.js';

export interface MintAccessTokenInput {
  subject: string;
  issuer: string;
  audience: string;
  ttlSeconds: number;
  amr?: string[];
  acr?: string;
  /** @default openid and every API scope */
  scope?: string[];
  /** epoch seconds; defaults to now */
  authTime?: number;
  clientId?: string;
  now?: number;
}

/** Signs an RFC 9068 access token (`typ: at+jwt`) with the configured key: the operator CLI's `token`. */
export async function mintAccessToken(key: SigningKey, input: MintAccessTokenInput): Promise<string> {
  const iat = Math.floor((input.now ?? Date.now()) / 1000);
  const claims: Record<string, unknown> = {
    scope: (input.scope ?? ['openid', ...API_SCOPE_NAMES]).join(' '),
    amr: input.amr ?? [],
    auth_time: input.authTime ?? iat,
    client_id: input.clientId ?? 'latchkey-cli',
  };
  if (input.acr) claims['acr'] = input.acr;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' })
    .setIssuer(input.issuer)
    .setAudience(input.audience)
    .setSubject(input.subject)
    .setIssuedAt(iat)
    .setExpirationTime(iat + input.ttlSeconds)
    .setJti(randomUUID())
    .sign(key.key);
}
