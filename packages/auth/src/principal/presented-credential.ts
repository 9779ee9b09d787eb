import type { ProofContext } from './dpop-proof.js';

// How a presented credential's text is read: an `Authorization` header's scheme and token, and the credential a
// WebSocket connection's parameters carry. Verifying it is access-token-verifier.ts's.

/**
 * Where a caller's credential arrives: the `Authorization` header of an HTTP request (GraphQL over HTTP, REST,
 * the login routes' API callers), or the `connectionParams` of a graphql-ws `connection_init` message, whose
 * `authorization` (or `Authorization`) value is a bearer token with or without its `Bearer ` scheme.
 */
export type PresentedCredential =
  | {
      authorization: string | null | undefined;
      /** the request's `DPoP` header, method and path, asked for only when the credential uses the DPoP scheme */
      dpop?: ProofOf;
    }
  | { connectionParams: unknown /** the WebSocket endpoint's path (`htu`; `htm` is GET) */; path?: string };

/** The proof a request carries, asked for only when its credential uses the DPoP scheme (bearer requests never build one). */
export type ProofOf = () => ProofContext | undefined;

/** The `Authorization` value a WebSocket connection's parameters stand for; false when they carry a non-string. */
export function authorizationOfConnection(connectionParams: unknown): string | undefined | false {
  const params = (connectionParams ?? {}) as { authorization?: unknown; Authorization?: unknown };
  const given = params.authorization ?? params.Authorization;
  if (given === undefined || given === null || given === '') return undefined;
  if (typeof given !== 'string') return false;
  return /^(bearer|dpop) /i.test(given) ? given : `Bearer ${given}`;
}

/** The DPoP proof of a WebSocket connection: `connectionParams.dpop`, made for GET on the endpoint's URL. */
export function proofOfConnection(connectionParams: unknown, path: string): ProofContext {
  const { dpop } = (connectionParams ?? {}) as { dpop?: unknown };
  return { proof: typeof dpop === 'string' ? dpop : undefined, method: 'GET', path };
}

/** `Authorization: Bearer <token>` or `DPoP <token>` (schemes case-insensitive); false when it is neither. */
export function presentedToken(header: string): { scheme: 'bearer' | 'dpop'; token: string } | false {
  const space = header.indexOf(' ');
  if (space < 0) return false;
  const scheme = header.slice(0, space).toLowerCase();
  if (scheme !== 'bearer' && scheme !== 'dpop') return false;
  const token = header.slice(space + 1).trim();
  return token.length > 0 ? { scheme, token } : false;
}

/** `Authorization: Bearer <token>` (RFC 6750: scheme case-insensitive). undefined = no credential presented. */
export function bearerToken(header: string | null | undefined): string | undefined | false {
  if (header == null || header === '') return undefined;
  const space = header.indexOf(' ');
  if (space < 0 || header.slice(0, space).toLowerCase() !== 'bearer') return false;
  const token = header.slice(space + 1).trim();
  return token.length > 0 ? token : false;
}
