import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify, type JWK } from 'jose';

/** The asymmetric algorithms a DPoP proof may be signed with (the provider's token endpoint takes the same). */
export const DPOP_ALGORITHMS = ['ES256', 'ES384', 'EdDSA', 'Ed25519', 'PS256', 'RS256'] as const;

/** Which DPoP error a refusal carries in `WWW-Authenticate` (RFC 9449 section 7.1). */
export type DpopError = 'invalid_dpop_proof' | 'invalid_token';

/** `WWW-Authenticate` for a refused DPoP request. */
export function dpopChallenge(error: DpopError): string {
  return `DPoP error="${error}", algs="${DPOP_ALGORITHMS.join(' ')}"`;
}

/** Where a proof was presented: the request's method and its URL's path (the query and fragment never count). */
export interface ProofContext {
  /** the `DPoP` header (HTTP) or `connectionParams.dpop` (WebSocket); undefined when none came */
  proof: string | undefined;
  /** upper case; a WebSocket handshake is GET */
  method: string;
  /** the path the request was made to, e.g. `/graphql` (joined to PUBLIC_URL for `htu`) */
  path: string;
  /**
   * An operation on a WebSocket connection whose `connection_init` already proved possession of this key with this
   * very token: its thumbprint. The proof was single use; the connection itself is what stays bound.
   */
  provenKey?: string;
}

export interface DpopProofCheckOptions {
  /** PUBLIC_URL: `htu` must be this origin and base path plus the request's path */
  publicUrl: string;
  /** DPOP_PROOF_MAX_AGE: how old a proof's `iat` may be, in seconds */
  maxAgeSeconds: number;
  /** JWT_CLOCK_SKEW: how far in the future a proof's `iat` may be, in seconds */
  clockSkewSeconds: number;
  /**
   * Records a proof's use: true the first time a key is seen by any instance, false after. The key is kept at
   * least until `until` (after that the proof is too old anyway).
   */
  firstUse: (key: string, until: Date) => Promise<boolean>;
  /** @default Date.now */
  now?: () => number;
}

const MAX_PROOF_LENGTH = 8192;
const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

/**
 * The resource server's check of a DPoP proof (RFC 9449 sections 4.3 and 7.1), on every request, whether or not
 * the access token itself was verified from the cache: a `dpop+jwt` signed by the asymmetric public key in its
 * own header, that key's thumbprint equal to the token's `cnf.jkt`, `htm` and `htu` this request's, `iat` within
 * the allowed age, `ath` the token's SHA-256, and `jti` never seen before by any instance (`firstUse`).
 */
export function createDpopProofCheck(options: DpopProofCheckOptions) {
  const base = options.publicUrl.replace(/\/$/, '');
  const now = options.now ?? Date.now;

  /** The error to answer with, or undefined when the proof is good. */
  return async function checkProof(context: ProofContext, accessToken: string, jkt: string): Promise<DpopError | undefined> {
    const { proof } = context;
    if (proof === undefined || proof === '' || proof.length > MAX_PROOF_LENGTH) return 'invalid_dpop_proof';
    let payload: Record<string, unknown>;
    let jwk: JWK;
    try {
      const verified = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: [...DPOP_ALGORITHMS] });
      payload = verified.payload;
      jwk = verified.protectedHeader.jwk as JWK;
    } catch {
      return 'invalid_dpop_proof';
    }
    const { iat, jti, htm, htu, ath } = payload;
    if (typeof iat !== 'number' || typeof jti !== 'string' || jti === '' || jti.length > 256) return 'invalid_dpop_proof';
    const nowSeconds = now() / 1000;
    if (iat < nowSeconds - options.maxAgeSeconds || iat > nowSeconds + options.clockSkewSeconds) return 'invalid_dpop_proof';
    if (htm !== context.method) return 'invalid_dpop_proof';
    if (typeof htu !== 'string' || !sameTarget(htu, `${base}${context.path}`)) return 'invalid_dpop_proof';
    if (ath !== sha256(accessToken)) return 'invalid_dpop_proof';
    // A proof made with another key than the token is bound to: the token is not this caller's.
    if ((await calculateJwkThumbprint(jwk)) !== jkt) return 'invalid_token';
    const until = new Date((iat + options.maxAgeSeconds + options.clockSkewSeconds) * 1000);
    if (!(await options.firstUse(sha256(`${jkt}:${jti}`), until))) return 'invalid_dpop_proof';
    return undefined;
  };
}

export type DpopProofCheck = ReturnType<typeof createDpopProofCheck>;

/** `htu` without its query and fragment equals the expected URL (RFC 9449 section 4.3, point 9). */
function sameTarget(htu: string, expected: string): boolean {
  const url = URL.parse(htu);
  if (!url) return false;
  url.search = '';
  url.hash = '';
  return url.href === new URL(expected).href;
}

/** The proof context of an HTTP request: its `DPoP` header (one value only), method and path without the query. */
export function proofOfRequest(req: {
  method?: string | undefined;
  url?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
}): ProofContext {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  const proof = req.headers['dpop'];
  return { proof: typeof proof === 'string' ? proof : undefined, method: req.method ?? 'GET', path: query < 0 ? url : url.slice(0, query) };
}
