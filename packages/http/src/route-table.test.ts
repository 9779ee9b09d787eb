import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendJson } from './respond.js';
import { createRouteTable } from './route-table.js';

const table = createRouteTable([
  { path: '/login', methods: ['GET', 'HEAD'], handler: (_req, res) => sendJson(res, 200, { route: 'login' }) },
  { path: '/ott/generate', methods: ['POST'], handler: (_req, res) => sendJson(res, 202, { route: 'generate' }) },
  {
    path: '/interaction/:uid',
    methods: ['GET', 'HEAD'],
    params: { uid: /^[A-Za-z0-9_-]{1,64}$/ },
    handler: (_req, res, { params }) => sendJson(res, 200, params),
  },
  {
    path: '/oidc/*',
    methods: 'any',
    handler: (req, res, { path }) => sendJson(res, 200, { method: req.method, path }),
    templateOf: () => '/oidc/*',
  },
]);

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => void table.dispatch(req, res, (req.url ?? '/').split('?')[0]!));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the route table', () => {
  it('answers a listed method with the route, another with 405 and the Allow the table declares', async () => {
    expect(await (await fetch(`${base}/login`)).json()).toEqual({ route: 'login' });
    const refused = await fetch(`${base}/login`, { method: 'POST' });
    expect(refused.status).toBe(405);
    expect(refused.headers.get('allow')).toBe('GET, HEAD');
    expect(await refused.json()).toEqual({ statusCode: 405, message: 'Method Not Allowed', error: 'Method Not Allowed' });
    expect((await fetch(`${base}/ott/generate`)).headers.get('allow')).toBe('POST');
  });

  it('matches parameters only where their pattern fits, families by prefix, and nothing else (404)', async () => {
    expect(await (await fetch(`${base}/interaction/abc_1`)).json()).toEqual({ uid: 'abc_1' });
    expect((await fetch(`${base}/interaction/a%20b`)).status).toBe(404);
    expect((await fetch(`${base}/interaction/a/b`)).status).toBe(404);
    expect(await (await fetch(`${base}/oidc/token`, { method: 'DELETE' })).json()).toEqual({ method: 'DELETE', path: '/oidc/token' });
    const missing = await fetch(`${base}/nowhere`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ statusCode: 404, message: 'Not Found', error: 'Not Found' });
  });

  it('labels a path by its route, never by the path itself', () => {
    expect(table.templateOf('/login')).toBe('/login');
    expect(table.templateOf('/interaction/abc')).toBe('/interaction/:uid');
    expect(table.templateOf('/oidc/anything')).toBe('/oidc/*');
    expect(table.templateOf('/secret-token-here')).toBe('other');
  });
});
