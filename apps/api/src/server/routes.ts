import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Method, type Route, sendHttpError } from '@latchkey/http';
import type { createDemoClient } from '../demo/page.js';
import type { Probes } from './probes.js';
import type { ProtectedResource } from '@latchkey/auth/tokens';

export interface RouteTableParts {
  /** `/graphql` (its refusals are GraphQL errors: it checks the method itself) */
  graphql: (req: IncomingMessage, res: ServerResponse) => void;
  /** the REST routes under `/api/` (their own 404 and 405), and their metrics labels */
  api: (req: IncomingMessage, res: ServerResponse, path: string) => void;
  apiTemplateOf: (path: string) => string | undefined;
  /** the authorization server: the provider's endpoints and the login pages and routes */
  authorization: readonly Route[];
  probes: Probes;
  /** the public keys, as served at /.well-known/jwks.json */
  jwksBody: string;
  /** the API's protected resource metadata (RFC 9728): where it is served, and the document */
  protectedResource: Pick<ProtectedResource, 'path' | 'body'>;
  /** the demo client (AUTH_DEMO_CLIENT); undefined: none */
  demo: ReturnType<typeof createDemoClient> | undefined;
}

const GET_HEAD: readonly Method[] = ['GET', 'HEAD'];

/**
 * The demo client's page, script and modules: GET and HEAD only. Anything else, or no demo client, is 404 like
 * any unknown path (they stay routes so that their requests keep their metrics labels).
 */
function demoRoutes(demo: RouteTableParts['demo']): Route[] {
  const serve =
    (
      send: (demo: NonNullable<RouteTableParts['demo']>, req: IncomingMessage, res: ServerResponse, path: string) => boolean,
    ): Route['handler'] =>
    (req, res, { path }) => {
      if (demo && (req.method === 'GET' || req.method === 'HEAD') && send(demo, req, res, path)) return;
      sendHttpError(res, 404, 'Not Found');
    };
  const page = serve((demo, req, res) => {
    demo.sendPage(req, res);
    return true;
  });
  return [
    { path: '/', methods: 'any', handler: page },
    { path: '/callback', methods: 'any', handler: page },
    {
      path: '/demo.js',
      methods: 'any',
      handler: serve((demo, req, res) => {
        demo.sendScript(req, res);
        return true;
      }),
    },
    {
      path: '/demo.css',
      methods: 'any',
      handler: serve((demo, req, res) => {
        demo.sendStylesheet(req, res);
        return true;
      }),
    },
    { path: '/client/*', methods: 'any', handler: serve((demo, req, res, path) => demo.sendClientModule(req, res, path)) },
  ];
}

/** Every route of the main listener: path, methods, handler (docs/architecture.md, "The request path"). */
export function routeTable(parts: RouteTableParts): Route[] {
  return [
    { path: '/graphql', methods: 'any', handler: parts.graphql },
    { path: '/api/*', methods: 'any', handler: (req, res, { path }) => parts.api(req, res, path), templateOf: parts.apiTemplateOf },
    ...parts.authorization,
    { path: '/healthz', methods: GET_HEAD, handler: (_req, res) => parts.probes.health(res) },
    { path: '/readyz', methods: GET_HEAD, handler: (_req, res) => void parts.probes.readiness(res) },
    {
      path: '/.well-known/jwks.json',
      methods: GET_HEAD,
      handler(_req, res) {
        res.writeHead(200, { 'content-type': 'application/jwk-set+json; charset=utf-8', 'cache-control': 'public, max-age=300' });
        res.end(parts.jwksBody);
      },
    },
    {
      path: parts.protectedResource.path,
      methods: GET_HEAD,
      handler(_req, res) {
        // Public metadata, as discovery is: any origin may read it (a browser client learns where to sign in).
        res.writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          'cache-control': 'public, max-age=300',
          'access-control-allow-origin': '*',
        });
        res.end(parts.protectedResource.body);
      },
    },
    ...demoRoutes(parts.demo),
  ];
}
