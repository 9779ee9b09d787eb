import type { IncomingMessage, ServerResponse } from 'node:http';
import { discardBody } from './discard-body.js';
import { sendHttpError } from './respond.js';

export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/** What a route learns of the request's path: the path itself and the values of its `:name` segments. */
export interface RouteMatch {
  path: string;
  params: Record<string, string>;
}

/**
 * One route: a path, the methods it answers and its handler. The path is exact (`/login/ott`), has `:name`
 * segments (`/interaction/:uid`, each value checked against `params`), or names a family by its prefix
 * (`/oidc/*`: every path under `/oidc/`).
 */
export interface Route {
  path: string;
  /**
   * The methods it answers (list GET and HEAD alike); any other is 405 with an `Allow` of these. `any`: the
   * handler answers every method itself (GraphQL, whose refusals are GraphQL errors; the REST router; the
   * OpenID provider; a feature that is switched off and answers 404 whatever the method).
   */
  methods: readonly Method[] | 'any';
  /** what a `:name` segment must look like; a path whose value does not fit is no match (404) */
  params?: Record<string, RegExp>;
  handler: (req: IncomingMessage, res: ServerResponse, match: RouteMatch) => void | Promise<void>;
  /** the metrics label of a path in a family (`/api/documents/:id`); undefined: the route's own path */
  templateOf?: (path: string) => string | undefined;
}

interface Compiled {
  route: Route;
  /** the segments of a `:name` path, or undefined */
  segments?: string[];
  /** the prefix of a `/*` family, or undefined */
  prefix?: string;
}

function compile(route: Route): Compiled {
  if (route.path.endsWith('/*')) return { route, prefix: route.path.slice(0, -1) };
  if (route.path.includes('/:')) return { route, segments: route.path.split('/') };
  return { route };
}

function paramsOf({ route, segments }: Compiled, path: string): Record<string, string> | undefined {
  const parts = path.split('/');
  if (!segments || parts.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const part = parts[i]!;
    if (!segment.startsWith(':')) {
      if (segment !== part) return undefined;
      continue;
    }
    const name = segment.slice(1);
    if (part === '' || !(route.params?.[name]?.test(part) ?? true)) return undefined;
    params[name] = part;
  }
  return params;
}

/**
 * A declarative route table: exact paths first, then paths with parameters and families, in the order given.
 * A path no route matches is 404; a method a route does not list is 405 with `Allow` derived from the table.
 */
export function createRouteTable(routes: readonly Route[]) {
  const exact = new Map<string, Compiled>();
  const patterns: Compiled[] = [];
  for (const route of routes) {
    const compiled = compile(route);
    if (compiled.prefix === undefined && compiled.segments === undefined) {
      if (exact.has(route.path)) throw new Error(`two routes for ${route.path}`);
      exact.set(route.path, compiled);
    } else patterns.push(compiled);
  }

  function find(path: string): { compiled: Compiled; params: Record<string, string> } | undefined {
    const found = exact.get(path);
    if (found) return { compiled: found, params: {} };
    for (const compiled of patterns) {
      if (compiled.prefix !== undefined) {
        if (path.startsWith(compiled.prefix)) return { compiled, params: {} };
        continue;
      }
      const params = paramsOf(compiled, path);
      if (params) return { compiled, params };
    }
    return undefined;
  }

  /** Answers the request: its route's handler, or 404, or 405 (a body sent with those is discarded: discardBody). */
  function dispatch(req: IncomingMessage, res: ServerResponse, path: string): void | Promise<void> {
    const found = find(path);
    if (!found) {
      discardBody(req, res);
      return sendHttpError(res, 404, 'Not Found');
    }
    const { route } = found.compiled;
    if (route.methods !== 'any' && !route.methods.includes(req.method as Method)) {
      discardBody(req, res);
      return sendHttpError(res, 405, 'Method Not Allowed', { allow: route.methods.join(', ') });
    }
    return route.handler(req, res, { path, params: found.params });
  }

  /**
   * The route template of a request path, for metrics: the exact path, a route's declared path (`/interaction/:uid`),
   * a family's own label, `other` for anything else. Never the path itself: label values must not come from the client.
   */
  function templateOf(path: string): string {
    const found = find(path);
    if (!found) return 'other';
    const { route } = found.compiled;
    return route.templateOf ? (route.templateOf(path) ?? 'other') : route.path;
  }

  return { dispatch, templateOf };
}

export type RouteTable = ReturnType<typeof createRouteTable>;
