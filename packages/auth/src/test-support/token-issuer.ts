import { generateSigningJwk, parseSigningKey } from '../keys/key-material.js';
import { createAccessTokenVerifier } from '../principal/access-token-verifier.js';
import { mintAccessToken } from '../principal/mint-access-token.js';

const TEST_ISSUER = 'https://issuer.test';
const TEST_AUDIENCE = 'urn:latchkey:api';

/** A fresh signing key, a verifier that trusts it, and a minter of alice's access tokens (seconds to live, issued at). */
export async function tokenIssuer(now: () => number = Date.now) {
  const key = await parseSigningKey(JSON.stringify(await generateSigningJwk()));
  const verifier = createAccessTokenVerifier({
    jwks: { keys: [key.publicJwk] },
    algorithms: [key.alg],
    issuer: TEST_ISSUER,
    audience: TEST_AUDIENCE,
    clockSkewSeconds: 0,
    now,
  });
  const token = (ttlSeconds = 60, at = now()) =>
    mintAccessToken(key, { subject: 'alice', issuer: TEST_ISSUER, audience: TEST_AUDIENCE, ttlSeconds, now: at });
  return { verifier, token };
}
