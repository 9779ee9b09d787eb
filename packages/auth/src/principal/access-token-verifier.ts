import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyOptions } from 'jose';
import { isPromise } from '@whatwg-node/promise-helpers';
import { requestMemo } from '@latchkey/http';
import { dpopChallenge, type DpopError, type DpopProofCheck, type ProofContext } from './dpop-proof.js';
import {
  authorizationOfConnection,
  presentedToken,
  proofOfConnection,
  type PresentedCredential,
  type ProofOf,
} from './presented-credential.js';

/** A signed-in caller: a copy of its verified token's claims (`payload`, by `callerOf`; a snapshot, spec Authentication 3). */
export interface SignedInCaller {
  readonly subject: string;
  readonly scope: readonly string[];
  /** RFC 8176 authentication method references */
  readonly amr: readonly string[];
  readonly acr: string | null;
  /** epoch seconds */
  readonly authTime: number | null;
  /** epoch seconds */
  readonly expiresAt: number;
  readonly issuedAt: number | null;
  readonly tokenId: string | null;
  readonly clientId: string | null;
  /** the provider session the token was issued under (`sid`); null for tokens minted outside one (the CLI) */
  readonly sessionId: string | null;
  /** the thumbprint of the key the token is bound to (`cnf.jkt`, DPoP); null for a bearer token */
  readonly boundKey: string | null;
}

/** A guest is `null`: the one value for "not signed in" inside the app. */
export type Caller = SignedInCaller | null;

export interface AccessTokenVerifierOptions {
  /** public keys trusted for access tokens */
  jwks: JSONWebKeySet;
  /** alg allow-list; taken from the keys, never from the token */
  algorithms: string[];
  issuer: string;
  /** the audience a token must be issued for; any one of several (an audience being renamed) */
  audience: string | readonly string[];
  /** tolerance for exp/nbf/iat, in seconds */
  clockSkewSeconds: number;
  /**
   * How many verified tokens are remembered until they expire. Verifying a signature costs
   * 50-250 us here; a cache hit costs a Map lookup.
   * @default 10000
   */
  cacheSize?: number;
  /** @default Date.now */
  now?: () => number;
  /**
   * Sessions ended before their tokens expire: a token carrying one's `sid` is refused, checked on every request
   * after the cache. `isEnded` throws when it cannot say (the list is stale): the caller answers SERVICE_UNAVAILABLE.
   * Without it, `sid` is not checked.
   */
  endedSessions?: {
    isEnded(sessionId: string): boolean;
    /** whether the user revoked the client (Connected apps) after this token was issued */
    isAppRevoked?(clientId: string, userId: string, issuedAt: number | null): boolean;
  };
  /**
   * Checks the DPoP proof of a request whose token is bound to a key (`cnf.jkt`, RFC 9449), on every request.
   * Without it, bound tokens are refused (they would be worth nothing without their proof).
   */
  checkProof?: DpopProofCheck;
}

/** Why a presented token was refused; never sent to clients in detail, useful in logs and tests. */
export type TokenRejection = 'malformed' | 'invalid' | 'expired' | 'revoked';

export type VerificationResult =
  | { ok: true; caller: SignedInCaller }
  | {
      ok: false;
      rejection: TokenRejection;
      /** set when the request used the DPoP scheme or sent a bound token as Bearer: the DPoP challenge's error */
      dpop?: DpopError;
    };

/** `WWW-Authenticate` for a refused credential: RFC 6750's, or RFC 9449's when DPoP was in play. */
export function challengeFor(result: VerificationResult & { ok: false }): string {
  return result.dpop ? dpopChallenge(result.dpop) : 'Bearer error="invalid_token"';
}

interface CacheEntry {
  result: VerificationResult & { ok: true };
  /** ms; the entry is dropped (and the token refused) once now passes exp + skew */
  expiresAtMs: number;
  /** the token, when it was presented with the DPoP scheme (each request's proof is checked against it) */
  dpopToken?: string;
}

const NO_PROOF: ProofContext = Object.freeze({ proof: undefined, method: '', path: '' });

const MALFORMED: VerificationResult = Object.freeze({ ok: false, rejection: 'malformed' });
const EXPIRED: VerificationResult = Object.freeze({ ok: false, rejection: 'expired' });
const REVOKED: VerificationResult = Object.freeze({ ok: false, rejection: 'revoked' });
const BAD_PROOF: VerificationResult = Object.freeze({ ok: false, rejection: 'invalid', dpop: 'invalid_dpop_proof' });
const NOT_THIS_KEY: VerificationResult = Object.freeze({ ok: false, rejection: 'invalid', dpop: 'invalid_token' });
/** A failure of a request made with the DPoP scheme carries the DPoP challenge. */
const asDpop = (result: VerificationResult): VerificationResult =>
  result.ok || result.dpop ? result : { ...result, dpop: result.rejection === 'malformed' ? 'invalid_dpop_proof' : 'invalid_token' };
const JWS_COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const MAX_TOKEN_LENGTH = 8192;

const stringList = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item) => typeof item === 'string') : []);

function callerOf(payload: JWTPayload): SignedInCaller {
  const scope = typeof payload['scope'] === 'string' ? payload['scope'].split(' ').filter(Boolean) : [];
  return Object.freeze({
    subject: payload.sub!,
    scope: Object.freeze(scope),
    amr: Object.freeze(stringList(payload['amr'])),
    acr: typeof payload['acr'] === 'string' ? payload['acr'] : null,
    authTime: typeof payload['auth_time'] === 'number' ? payload['auth_time'] : null,
    expiresAt: payload.exp!,
    issuedAt: typeof payload.iat === 'number' ? payload.iat : null,
    tokenId: typeof payload.jti === 'string' ? payload.jti : null,
    clientId: typeof payload['client_id'] === 'string' ? payload['client_id'] : null,
    sessionId: typeof payload['sid'] === 'string' && payload['sid'].length > 0 ? payload['sid'] : null,
    boundKey: boundKeyOf(payload['cnf']),
  });
}

/** `cnf` as this API accepts it: absent, or `{ jkt }` alone (DPoP). Anything else (mTLS `x5t#S256`) is refused. */
function boundKeyOf(cnf: unknown): string | null {
  if (cnf === undefined) return null;
  const { jkt, ...rest } = (cnf ?? {}) as { jkt?: unknown };
  return typeof jkt === 'string' && jkt.length > 0 && Object.keys(rest).length === 0 ? jkt : UNSUPPORTED_BINDING;
}
const UNSUPPORTED_BINDING = '';

/**
 * A verifier's keys, settings and caches: made once by createAccessTokenVerifier and passed to its steps, which
 * are plain functions so that a request allocates nothing to reach them.
 */
interface VerifierState {
  options: AccessTokenVerifierOptions;
  keySet: ReturnType<typeof createLocalJWKSet>;
  cacheSize: number;
  now: () => number;
  skewMs: number;
  /** verified tokens, by the bare token (`verify`, `inspect`) or the whole `Authorization` header */
  cache: Map<string, CacheEntry>;
  endedSessions: AccessTokenVerifierOptions['endedSessions'];
  /** signature checks under way, by cache key */
  pending: Map<string, Promise<VerificationResult>>;
  verifyOptions: JWTVerifyOptions;
}

/** A verified token of an ended session, or of an app its user revoked, is refused; asked on every request, cached or not. */
function live({ endedSessions }: VerifierState, result: VerificationResult): VerificationResult {
  if (!result.ok || !endedSessions) return result;
  const { sessionId, clientId, subject, issuedAt } = result.caller;
  if (sessionId !== null && endedSessions.isEnded(sessionId)) return REVOKED;
  // An app its user disconnected: its tokens for that user issued before are refused (they carry no grant id).
  return clientId !== null && endedSessions.isAppRevoked?.(clientId, subject, issuedAt) ? REVOKED : result;
}

function remember({ cache, cacheSize }: VerifierState, token: string, entry: CacheEntry): void {
  if (cacheSize === 0) return;
  if (cache.size >= cacheSize) {
    // Oldest first (Map keeps insertion order): expired entries are removed on lookup anyway.
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  cache.set(token, entry);
}

async function verifySignature(state: VerifierState, token: string, cacheKey: string, dpop: boolean): Promise<VerificationResult> {
  try {
    const { payload } = await jwtVerify(token, state.keySet, { ...state.verifyOptions, currentDate: new Date(state.now()) });
    // A token bound to a key is worth nothing without its proof of possession: only DPoP's (`cnf.jkt`) is
    // checked here (with `checkProof`), so any other binding, or DPoP without a check, is refused.
    const boundKey = boundKeyOf(payload['cnf']);
    if (
      typeof payload.sub !== 'string' ||
      payload.sub.length === 0 ||
      typeof payload.exp !== 'number' ||
      boundKey === UNSUPPORTED_BINDING ||
      (boundKey !== null && !state.options.checkProof)
    ) {
      return { ok: false, rejection: 'invalid' };
    }
    const result = { ok: true as const, caller: callerOf(payload) };
    remember(state, cacheKey, { result, expiresAtMs: payload.exp * 1000 + state.skewMs, ...(dpop ? { dpopToken: token } : {}) });
    return result;
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) return { ok: false, rejection: 'expired' };
    if (error instanceof joseErrors.JWSInvalid || error instanceof joseErrors.JWTInvalid) {
      return { ok: false, rejection: 'malformed' };
    }
    return { ok: false, rejection: 'invalid' };
  }
}

/** One signature check per token even when many requests bring it at once (a client's first burst). */
function verifyOnce(state: VerifierState, token: string, cacheKey: string, dpop = false): Promise<VerificationResult> {
  const { pending } = state;
  let inFlight = pending.get(cacheKey);
  if (!inFlight) {
    inFlight = verifySignature(state, token, cacheKey, dpop).finally(() => pending.delete(cacheKey));
    pending.set(cacheKey, inFlight);
  }
  return inFlight;
}

function cachedResult({ cache, now }: VerifierState, key: string): VerificationResult | undefined {
  const cached = cache.get(key);
  if (!cached) return undefined;
  if (now() < cached.expiresAtMs) return cached.result;
  cache.delete(key);
  return EXPIRED;
}

/** Verifies a bare bearer token (no proof: a key-bound token is refused). Synchronous on a cache hit. */
function verifyBearer(state: VerifierState, token: string): VerificationResult | Promise<VerificationResult> {
  const cached = cachedResult(state, token);
  if (cached) return presentedAs(state, cached, token, undefined);
  if (token.length > MAX_TOKEN_LENGTH || !JWS_COMPACT.test(token)) return MALFORMED;
  return verifyOnce(state, token, token).then((result) => presentedAs(state, result, token, undefined));
}

/**
 * A verified token as it was presented: as `Bearer` (`proof` undefined) it must not be bound to a key (RFC 9449
 * section 7.2: a bound token sent as a bearer token is refused); as `DPoP` it must be bound, and the request's
 * proof must pass (checked on every request, cached token or not). Then its session must not have ended.
 */
function presentedAs(
  state: VerifierState,
  result: VerificationResult,
  token: string,
  proof: ProofContext | undefined,
): VerificationResult | Promise<VerificationResult> {
  if (!result.ok) return proof ? asDpop(result) : result;
  const { boundKey } = result.caller;
  if (!proof) return boundKey === null ? live(state, result) : NOT_THIS_KEY;
  const { options } = state;
  if (boundKey === null || !options.checkProof) return NOT_THIS_KEY;
  if (proof.provenKey !== undefined) return proof.provenKey === boundKey ? asDpop(live(state, result)) : NOT_THIS_KEY;
  return options.checkProof(proof, token, boundKey).then((error) => {
    if (error === 'invalid_token') return NOT_THIS_KEY;
    if (error) return BAD_PROOF;
    return asDpop(live(state, result));
  });
}

/**
 * Verifies the credential of an `Authorization` header (`Bearer <token>`, or `DPoP <token>` with the request's
 * proof); undefined when none was presented. The cache is keyed by the whole header value, so the hot path of a
 * signed-in bearer request is one Map lookup with no string copying.
 */
function verifyHeader(
  state: VerifierState,
  header: string | null | undefined,
  proofOf?: ProofOf,
): VerificationResult | Promise<VerificationResult> | undefined {
  if (header == null || header === '') return undefined;
  // The hot path: a cached bearer token is one Map lookup, with no parsing and no string copying.
  const cached = state.cache.get(header);
  if (cached) {
    const { dpopToken } = cached;
    if (state.now() >= cached.expiresAtMs) {
      state.cache.delete(header);
      return dpopToken === undefined ? EXPIRED : asDpop(EXPIRED);
    }
    return dpopToken === undefined
      ? presentedAs(state, cached.result, '', undefined)
      : presentedAs(state, cached.result, dpopToken, proofOf?.() ?? NO_PROOF);
  }
  const presented = presentedToken(header);
  if (presented === false) return MALFORMED;
  const { token, scheme } = presented;
  // The DPoP scheme needs the request it was sent with (its proof, method and path); without one, nothing passes.
  const proof = scheme === 'dpop' ? (proofOf?.() ?? NO_PROOF) : undefined;
  if (token.length > MAX_TOKEN_LENGTH || !JWS_COMPACT.test(token)) return proof ? asDpop(MALFORMED) : MALFORMED;
  return verifyOnce(state, token, header, scheme === 'dpop').then((result) => presentedAs(state, result, token, proof));
}

/**
 * An access token's verified claims whatever key it is bound to, for introspection (RFC 7662, where the token is
 * presented without its proof): null when it does not verify, has expired, or its session has ended. Throws
 * `DatabaseUnavailableError` when the list of ended sessions is too old to say.
 */
async function inspectToken(state: VerifierState, token: string): Promise<SignedInCaller | null> {
  if (token.length > MAX_TOKEN_LENGTH || !JWS_COMPACT.test(token)) return null;
  // Keyed by the bare token, as `verify` is: a bound token found here still needs its proof everywhere else.
  const result = cachedResult(state, token) ?? (await verifyOnce(state, token, token));
  return result.ok && live(state, result).ok ? result.caller : null;
}

/**
 * Verifies bearer access tokens (RFC 9068 `at+jwt`): signature always checked against the configured
 * keys, `alg` from the allow-list, `iss`, `aud`, `exp`/`nbf` with skew, `sub` present, no `cnf`. A verified token
 * is cached by its exact text until it expires, so a caller pays for the signature once.
 */
export function createAccessTokenVerifier(options: AccessTokenVerifierOptions) {
  const cache = new Map<string, CacheEntry>();
  const state: VerifierState = {
    options,
    keySet: createLocalJWKSet(options.jwks),
    cacheSize: options.cacheSize ?? 10_000,
    now: options.now ?? Date.now,
    skewMs: options.clockSkewSeconds * 1000,
    cache,
    endedSessions: options.endedSessions,
    pending: new Map(),
    verifyOptions: {
      algorithms: options.algorithms,
      issuer: options.issuer,
      audience: typeof options.audience === 'string' ? options.audience : [...options.audience],
      clockTolerance: options.clockSkewSeconds,
      typ: 'at+jwt',
      requiredClaims: ['exp', 'sub'],
    },
  };

  return {
    /** Verifies a bare bearer token (no proof: a key-bound token is refused). Synchronous on a cache hit. */
    verify: (token: string): VerificationResult | Promise<VerificationResult> => verifyBearer(state, token),
    /** Verifies the credential of an `Authorization` header; undefined when none was presented (see verifyHeader). */
    verifyAuthorization: (
      header: string | null | undefined,
      proofOf?: ProofOf,
    ): VerificationResult | Promise<VerificationResult> | undefined => verifyHeader(state, header, proofOf),
    /** An access token's verified claims whatever key it is bound to, for introspection (see inspectToken). */
    inspect: (token: string): Promise<SignedInCaller | null> => inspectToken(state, token),
    clear: () => cache.clear(),
    get cacheEntries() {
      return cache.size;
    },
  };
}

export type AccessTokenVerifier = ReturnType<typeof createAccessTokenVerifier>;

// Who is calling: the caller made of the verified token's claims (`SignedInCaller`, above), found the one way every
// entry point finds it (`callerFrom`), and, for GraphQL, once per operation (`createCallerResolution`).

/** A verification as it settles the caller: `undefined` when nothing was presented (a guest). */
export type CallerResult = VerificationResult | undefined;

const NOT_A_TOKEN: VerificationResult = Object.freeze({ ok: false, rejection: 'malformed' });

/**
 * The one way every entry point (GraphQL over HTTP and WebSocket, REST, the login routes' API callers) works
 * out who is calling (spec Authentication 1-5): the presented credential verified once, cached
 * by its exact text until it expires. Answers synchronously on a cache hit, so the signed-in hot path costs a
 * Map lookup. A presented credential that does not verify is `{ ok: false }`, never a guest: the caller decides
 * whether that is a 401 (REST, WebSocket) or a guest whose refusal carries its challenge (GraphQL's public fields).
 */
export function callerFrom(verifier: AccessTokenVerifier, presented: PresentedCredential): CallerResult | Promise<CallerResult> {
  if ('authorization' in presented) return verifier.verifyAuthorization(presented.authorization, presented.dpop);
  const header = authorizationOfConnection(presented.connectionParams);
  if (header === false) return NOT_A_TOKEN;
  return verifier.verifyAuthorization(header, () => proofOfConnection(presented.connectionParams, presented.path ?? '/graphql'));
}

export interface CallerResolutionOptions<Context extends object> {
  verifier: AccessTokenVerifier;
  /** The `Authorization` value an operation carries: its request's header, or its WebSocket connection's credential. */
  authorizationOf: (context: Context) => string | null | undefined;
  /** The DPoP proof an operation carries (its request's `DPoP` header, method and path), for DPoP-bound tokens. */
  proofOf?: (context: Context) => ProofContext | undefined;
}

export interface CallerResolution<Context extends object> {
  /**
   * `@envelop/generic-auth`'s `resolveUserFn`: the operation's caller, once per operation, through `callerFrom`
   * (synchronous on a cached bearer token). A presented credential that does not verify makes a guest (`null`)
   * whose refusal says so (`challengeOf`).
   */
  resolveUserFn: (context: Context) => Caller | Promise<Caller>;
  /** The `WWW-Authenticate` challenge for the operation's refused credential (Bearer's, or DPoP's); undefined if none. */
  challengeOf: (context: Context) => string | undefined;
}

/** The caller of a GraphQL operation (spec Authentication 1-5), resolved once per operation and remembered beside it. */
export function createCallerResolution<Context extends object>(options: CallerResolutionOptions<Context>): CallerResolution<Context> {
  const { verifier, authorizationOf, proofOf } = options;
  const rejected = requestMemo<VerificationResult & { ok: false }>('refused credential of the operation');
  const settle = (context: Context, result: CallerResult): Caller => {
    if (result?.ok) return result.caller;
    if (result) rejected.set(context, result);
    return null;
  };
  return {
    resolveUserFn(context) {
      const verified = callerFrom(verifier, { authorization: authorizationOf(context), dpop: proofOf && (() => proofOf(context)) });
      return isPromise(verified) ? verified.then((result) => settle(context, result)) : settle(context, verified);
    },
    challengeOf: (context) => {
      const result = rejected.get(context);
      return result ? challengeFor(result) : undefined;
    },
  };
}
