import { createHash, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

/** What one proof claims; anything left out is this request's honest value (now, a fresh jti). */
export interface ProofClaims {
  htm: string;
  htu: string;
  /** the access token the proof goes with (`ath`); none at the token endpoint */
  accessToken?: string;
  /** seconds since the epoch */
  iat?: number;
  jti?: string;
  /** replaces the computed `ath` */
  ath?: string;
}

/** A client's DPoP key (ES256) and the proofs it signs (RFC 9449 section 4.2), as a test makes them. */
export async function dpopKey() {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk: JWK = await exportJWK(publicKey);
  return {
    thumbprint: await calculateJwkThumbprint(jwk),
    proof: (claims: ProofClaims) => signProof(privateKey, jwk, claims),
  };
}

function signProof(privateKey: CryptoKey, jwk: JWK, claims: ProofClaims): Promise<string> {
  const payload: Record<string, unknown> = { htm: claims.htm, htu: claims.htu, jti: claims.jti ?? randomUUID() };
  if (claims.accessToken !== undefined) payload['ath'] = createHash('sha256').update(claims.accessToken).digest('base64url');
  if (claims.ath !== undefined) payload['ath'] = claims.ath;
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
    .setIssuedAt(claims.iat ?? Math.floor(Date.now() / 1000))
    .sign(privateKey);
}
