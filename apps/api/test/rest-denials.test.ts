import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { authorize, definePolicy } from '@latchkey/policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRestRouter, type RestMiddleware } from '../src/rest/router.js';

interface Caller {
  id: string;
}
const VaultPolicy = definePolicy('VaultPolicy', {
  abilities: { open: (user: Caller | null) => user?.id === 'keyholder' },
});

// Who is calling comes from a header here, so the test needs no token machinery.
const identify: RestMiddleware<Caller> = (request) => {
  const who = request.req.headers['x-user'];
  if (typeof who === 'string') request.caller = { id: who };
};
// An own middleware (a guard outside the handler) that authorizes: its denial is not converted.
const guard: RestMiddleware<Caller> = (request) => {
  if (request.req.url?.startsWith('/api/guarded')) authorize(request.caller, VaultPolicy.open, [], { handler: 'guard' });
};

const unexpected: unknown[] = [];
const router = createRestRouter<Caller>({
  middleware: [identify, guard],
  onUnexpected: (error) => unexpected.push(error),
  routes: [
    {
      method: 'GET',
      path: '/api/vault',
      async handler({ caller }) {
        authorize(caller, VaultPolicy.open, [], { handler: 'GET /api/vault' });
        return { status: 200, body: { opened: true } };
      },
    },
    { method: 'GET', path: '/api/guarded', handler: async () => ({ status: 200, body: { opened: true } }) },
    {
      method: 'GET',
      path: '/api/open',
      public: true,
      handler: async ({ caller }) => {
        authorize(caller, VaultPolicy.open, [], { handler: 'GET /api/open' });
        return { status: 200, body: {} };
      },
    },
  ],
});

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => void router.handle(req, res, req.url!.split('?')[0]!, new URLSearchParams()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const get = async (path: string, user?: string) => {
  const res = await fetch(`${base}${path}`, { headers: user ? { 'x-user': user } : {} });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    text: '',
    challenge: res.headers.get('www-authenticate'),
  };
};

describe('Events 3: where a denial is converted', () => {
  it('a denial leaving a handler becomes 403 for a known user, with the spec body and no policy or ability named', async () => {
    const res = await get('/api/vault', 'someone');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ statusCode: 403, message: expect.any(String), error: 'Forbidden' });
    expect(JSON.stringify(res.body)).not.toMatch(/VaultPolicy|open/);
    expect((await get('/api/vault', 'keyholder')).body).toEqual({ opened: true });
  });

  it('rule 5: a named ability that denies a guest answers 401 (signing in might change it)', async () => {
    const res = await get('/api/open');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ statusCode: 401, message: expect.any(String), error: 'Unauthorized' });
    expect(res.challenge).toBe('Bearer');
  });

  it('rule 7: a route with no declared requirement still needs a signed-in caller (401 before the handler)', async () => {
    const res = await get('/api/vault');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
  });

  it('a denial thrown outside a handler (own middleware or guard) is not converted: 500, naming nothing', async () => {
    const res = await get('/api/guarded', 'someone');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ statusCode: 500, message: 'Internal server error.', error: 'Internal Server Error' });
    expect(unexpected).toHaveLength(1);
    expect((unexpected[0] as { name: string }).name).toBe('AuthorizationDenied');
    // The same guard lets the keyholder through.
    expect((await get('/api/guarded', 'keyholder')).status).toBe(200);
  });
});
