import type { IncomingMessage, ServerResponse } from 'node:http';
import { isDatabaseUnavailable, RETRY_AFTER_SECONDS } from '@latchkey/db';
import { denialToHttp, isAuthorizationDenied, type AuthorizationDenied } from '@latchkey/policy';
import { isDomainError } from '../domain/errors.js';
import type { RequestScope } from '../domain/request-scope.js';
import { acceptableContentType, BodyTooLargeError, discardBody, httpErrorBody, readBody, sendJson } from '@latchkey/http';
import {
  insufficientScopeChallenge,
  insufficientScopeMessage,
  isStepUpRequired,
  meetsStepUp,
  stepUpChallengeHeader,
  stepUpParameters,
  StepUpRequired,
  type AuthenticationEvidence,
  withResourceMetadata,
  type StepUpRequirement,
} from '@latchkey/auth/tokens';

/**
 * What a REST handler receives: one request, made once by the router, also the scope of the request's memos
 * (the caller's attributes, the loaders, the database view) and its database deadline.
 */
export interface RestRequest<Caller> extends RequestScope {
  req: IncomingMessage;
  params: Record<string, string>;
  query: URLSearchParams;
  /** the signed-in caller, set by the authentication step; null for a guest */
  caller: Caller | null;
  /** the parsed JSON body (POST, PUT, PATCH), or undefined */
  body: unknown;
}

export interface RestResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RestRoute<Caller> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** `/api/documents/:id` */
  path: string;
  /** route metadata: readable without signing in (spec Authorization 7). @default false */
  public?: boolean;
  /**
   * Route metadata (delegated access): the API scope the caller's token must hold, checked right after signing in and
   * before anything else (no record is loaded): 403 with `WWW-Authenticate: Bearer error="insufficient_scope"`.
   */
  scope?: string;
  /**
   * Route level (spec Authorization 1): a check from the caller and the route's metadata, before the body is
   * read and the handler runs. It answers with the denial (already published) or null; the router converts
   * it to 401/403 itself, as a framework guard would.
   */
  guard?: (request: RestRequest<Caller>) => Promise<AuthorizationDenied | null>;
  /**
   * Route metadata (spec Multi-factor rules 6, RFC 9470): the step-up the caller's token must meet (`acr`,
   * `maxAge`), checked after `guard`, so a caller who is not allowed at all still gets 403. Short of it: 401 with
   * `code: "INSUFFICIENT_USER_AUTHENTICATION"` and the `WWW-Authenticate` challenge. The caller must carry the
   * token's `acr` and `authTime` (as a `SignedInCaller` does).
   */
  stepUp?: StepUpRequirement;
  handler: (request: RestRequest<Caller>) => Promise<RestResponse>;
  /** what the request costs its caller's budget (a list: its page size, plus one). @default 1 */
  cost?: (request: RestRequest<Caller>) => number;
}

/** What a request's charge to its caller's budget answered: refused (the answer), or admitted. */
export interface RestCharged {
  refused?: RestResponse;
  /** the fields that report the budget after the charge */
  headers: Record<string, string>;
  /**
   * Admitted, then refused before its handler ran (signed out, denied, a body refused): charged its minimum, 1, as
   * GraphQL charges an operation its route check refuses; the fields that report the budget then.
   */
  toMinimum?: () => Record<string, string>;
}

export type RestCharge<Caller> = (request: RestRequest<Caller>, cost: number) => Promise<RestCharged> | RestCharged;

/**
 * Runs before the handler, outside it. Returning a response ends the request; a denial (or any error)
 * thrown here is NOT converted (spec Events 3): it becomes a 500.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a middleware that lets the request through returns nothing at all
export type RestMiddleware<Caller> = (request: RestRequest<Caller>) => RestResponse | void | Promise<RestResponse | void>;

export interface RestRouterOptions<Caller> {
  routes: readonly RestRoute<Caller>[];
  middleware?: readonly RestMiddleware<Caller>[];
  /** largest accepted body. @default 1 MiB */
  maxBodyBytes?: number;
  /** told about every 500 (the response itself reveals nothing) */
  onUnexpected?: (error: unknown, req: IncomingMessage) => void;
  /** a request's id (`X-Request-Id`), carried by its `RestRequest` into audit events; '' without it */
  requestIdOf?: (req: IncomingMessage) => string | undefined;
  /** charges every routed request to its caller's budget once it is authenticated; undefined: no budgets */
  charge?: RestCharge<Caller>;
  /** the API scopes a signed-in caller's token holds; null: a caller scopes do not restrict. @default null for every caller */
  grantedScopes?: (caller: Caller) => ReadonlySet<string> | null;
  /** the API's protected resource metadata (RFC 9728), named by every 401's `WWW-Authenticate`; undefined: not named */
  resourceMetadataUrl?: string;
}

/** The error body of docs/endpoints.md: `{ statusCode, message, error }`, plus any extra fields given. */
export function restError(
  status: number,
  message: string,
  extra: Record<string, unknown> = {},
  headers?: Record<string, string>,
): RestResponse {
  return { status, body: httpErrorBody(status, message, extra), headers };
}

/**
 * The step-up challenge (RFC 9470 §3): 401 with `WWW-Authenticate: Bearer error="insufficient_user_authentication",
 * error_description="...", acr_values="...", max_age=N` and the same parameters in the body.
 */
export function stepUpChallenge(error: StepUpRequired): RestResponse {
  const { requirement } = error;
  return restError(
    401,
    error.message,
    { code: error.code, ...stepUpParameters(requirement) },
    { 'www-authenticate': stepUpChallengeHeader(requirement) },
  );
}

function denial(error: AuthorizationDenied): RestResponse {
  const { status, body } = denialToHttp(error);
  return { status, body, headers: status === 401 ? { 'www-authenticate': 'Bearer' } : undefined };
}

interface CompiledRoute<Caller> {
  route: RestRoute<Caller>;
  segments: string[];
}

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

function match(segments: string[], parts: string[]): Record<string, string> | null {
  if (segments.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (segment.startsWith(':')) {
      let value: string;
      try {
        value = decodeURIComponent(parts[i]!);
      } catch {
        return null;
      }
      params[segment.slice(1)] = value;
    } else if (segment !== parts[i]) return null;
  }
  return params;
}

/**
 * Writes a handler's (or the router's own) response. A request answered before its body was read (a 401 for a
 * missing token, a 413 from Content-Length) has the rest of its body discarded within the bound, so the client still
 * sending reads this answer (discardBody; nothing happens once the body has been read).
 */
function send(req: IncomingMessage, res: ServerResponse, response: RestResponse): void {
  discardBody(req, res);
  if (response.status === 204 || response.body === undefined) {
    res.writeHead(response.status, {
      'cache-control': (res.getHeader('cache-control') as string | undefined) ?? 'no-store',
      ...response.headers,
    });
    res.end();
    return;
  }
  sendJson(res, response.status, response.body, response.headers);
}

/**
 * Fair use: a routed request spends its caller's budget, a refused one included; the answer reports it (headers set
 * on it now).
 */
async function spend<Caller>(
  charge: RestCharge<Caller>,
  request: RestRequest<Caller>,
  route: RestRoute<Caller>,
  res: ServerResponse,
): Promise<RestCharged> {
  const charged = await charge(request, route.cost?.(request) ?? 1);
  setHeaders(res, charged.headers);
  return charged;
}

const setHeaders = (res: ServerResponse, headers: Record<string, string>) => {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
};

/**
 * The route's own checks before its handler, in order: signed in, its guard, its step-up, its body (read into the
 * request). The response refusing the request, or undefined.
 */
async function refusalBeforeHandler<Caller>(
  route: RestRoute<Caller>,
  request: RestRequest<Caller>,
  options: Pick<RestRouterOptions<Caller>, 'grantedScopes'> & { maxBodyBytes: number },
): Promise<RestResponse | undefined> {
  // Route level (spec Authorization 4, 7): no declared requirement still means signed in.
  if (!route.public && request.caller === null)
    return restError(401, 'Sign in to perform this operation.', {}, { 'www-authenticate': 'Bearer' });
  if (route.scope && request.caller !== null && options.grantedScopes?.(request.caller)?.has(route.scope) === false) {
    const required = [route.scope];
    return restError(
      403,
      insufficientScopeMessage(required),
      { scope: route.scope },
      { 'www-authenticate': insufficientScopeChallenge(required) },
    );
  }
  const denied = route.guard ? await route.guard(request) : null;
  if (denied) return denial(denied);
  if (route.stepUp && !meetsStepUp(request.caller as AuthenticationEvidence | null, route.stepUp))
    return stepUpChallenge(new StepUpRequired(route.stepUp));
  if (WITH_BODY.has(request.req.method!)) {
    const parsed = await readJsonBody(request.req, options.maxBodyBytes);
    if ('refused' in parsed) return parsed.refused;
    request.body = parsed.value;
  }
  return undefined;
}

/** The JSON body of a POST, PUT or PATCH, or the response refusing it. */
async function readJsonBody(req: IncomingMessage, maxBodyBytes: number): Promise<{ value: unknown } | { refused: RestResponse }> {
  const length = req.headers['content-length'];
  if (length === '0' || (length === undefined && req.headers['transfer-encoding'] === undefined)) return { value: undefined };
  // CSRF (spec Cross-site 2): only JSON, which a cross-site form cannot send without a preflight.
  if (!acceptableContentType(req.headers['content-type'])) return refuse(415, 'Request bodies must be application/json (UTF-8).');
  if (length !== undefined && Number(length) > maxBodyBytes) {
    return refuse(413, `The request body is larger than ${maxBodyBytes} bytes.`, { connection: 'close' });
  }
  let raw: Buffer;
  try {
    raw = await readBody(req, maxBodyBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      return refuse(413, `The request body is larger than ${maxBodyBytes} bytes.`, { connection: 'close' });
    return refuse(400, 'The request body could not be read.');
  }
  try {
    return { value: JSON.parse(raw.toString('utf8')) as unknown };
  } catch {
    return refuse(400, 'The request body is not valid JSON.');
  }
}

const refuse = (status: number, message: string, headers?: Record<string, string>) => ({
  refused: restError(status, message, {}, headers),
});

/**
 * A small REST router: route metadata checked before the handler, JSON bodies, and conversion at the edge:
 * a denial leaving a handler becomes 401/403, a step-up 401 with its challenge, a hidden or missing record
 * 404, bad input 400 (spec "Status codes of protected REST-style routes"); whatever else escapes is a 500
 * that names nothing.
 */
export function createRestRouter<Caller>(options: RestRouterOptions<Caller>) {
  const routes: CompiledRoute<Caller>[] = options.routes.map((route) => ({ route, segments: route.path.split('/').filter(Boolean) }));
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const { resourceMetadataUrl } = options;
  /** Writes a routed request's answer: a challenge for a token names the resource's metadata (RFC 9728 §5.1). */
  const reply = (req: IncomingMessage, res: ServerResponse, response: RestResponse) => {
    const challenge = response.headers?.['www-authenticate'];
    const named: Record<string, string> =
      challenge && resourceMetadataUrl ? { 'www-authenticate': withResourceMetadata(challenge, resourceMetadataUrl) } : {};
    send(req, res, { ...response, headers: { ...response.headers, ...named } });
  };

  async function run(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> {
    const parts = path.split('/').filter(Boolean);
    const allowed: string[] = [];
    let found: { route: RestRoute<Caller>; params: Record<string, string> } | undefined;
    for (const { route, segments } of routes) {
      const params = match(segments, parts);
      if (!params) continue;
      allowed.push(route.method);
      if (route.method === 'GET') allowed.push('HEAD');
      // HEAD is GET without a body (node:http leaves the body out by itself).
      if (route.method === req.method || (route.method === 'GET' && req.method === 'HEAD')) found = { route, params };
    }
    if (!found) {
      if (allowed.length === 0) return reply(req, res, restError(404, 'Not Found'));
      return reply(req, res, restError(405, 'Method Not Allowed', {}, { allow: [...new Set(allowed)].join(', ') }));
    }
    const requestId = options.requestIdOf?.(req) ?? '';
    const request: RestRequest<Caller> = {
      req,
      requestId,
      params: found.params,
      query,
      caller: null,
      body: undefined,
      deadline: undefined,
    };
    // Outside the handler: nothing thrown here is converted (spec Events 3).
    for (const step of options.middleware ?? []) {
      const early = await step(request);
      if (early) return reply(req, res, early);
    }
    const charged = options.charge && (await spend(options.charge, request, found.route, res));
    if (charged?.refused) return reply(req, res, charged.refused);
    const refused = await refusalBeforeHandler(found.route, request, { grantedScopes: options.grantedScopes, maxBodyBytes });
    if (refused) {
      // Refused before its handler ran: the request costs its minimum.
      if (charged?.toMinimum) setHeaders(res, charged.toMinimum());
      return reply(req, res, refused);
    }
    let response: RestResponse;
    try {
      response = await found.route.handler(request);
    } catch (error) {
      if (isAuthorizationDenied(error)) response = denial(error);
      else if (isStepUpRequired(error)) response = stepUpChallenge(error);
      else if (isDomainError(error)) {
        const field = 'field' in error && error.field ? { field: error.field } : {};
        response = restError(error.status, error.message, { code: error.code, ...field });
      } else throw error;
    }
    reply(req, res, response);
  }

  /** Answers one request under the router's paths; never rejects. */
  function handle(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> {
    return run(req, res, path, query).catch((error: unknown) => {
      if (res.headersSent) return void res.destroy();
      // The database is down or did not answer in time: the environment's fault, said honestly (never a 500).
      if (isDatabaseUnavailable(error)) {
        return send(
          req,
          res,
          restError(
            503,
            'The database is unavailable. Try again shortly.',
            { code: 'SERVICE_UNAVAILABLE' },
            { 'retry-after': String(RETRY_AFTER_SECONDS) },
          ),
        );
      }
      options.onUnexpected?.(error, req);
      send(req, res, restError(500, 'Internal server error.'));
    });
  }

  /** The declared path (`/api/documents/:id`) a request path falls under, whatever its method; undefined if none. */
  function templateOf(path: string): string | undefined {
    const parts = path.split('/').filter(Boolean);
    for (const { route, segments } of routes) {
      if (segments.length === parts.length && segments.every((segment, i) => segment.startsWith(':') || segment === parts[i]))
        return route.path;
    }
    return undefined;
  }

  return { handle, templateOf };
}
