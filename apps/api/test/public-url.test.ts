import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalhostService, type TestService } from './support/service.js';

// In development a page opened at another host than PUBLIC_URL's moves to PUBLIC_URL first, so
// a sign-in started at 127.0.0.1 does not end at localhost (cookies, passkeys and links belong to PUBLIC_URL).

describe('development: pages move to PUBLIC_URL', () => {
  let service: TestService;
  let base: string;
  let other: string;
  beforeAll(async () => {
    ({ service, base } = await startLocalhostService({ NODE_ENV: 'development' }));
    other = base.replace('localhost', '127.0.0.1');
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('/, /login..., /account at 127.0.0.1: 307 to the same path and query at PUBLIC_URL', async () => {
    for (const path of ['/', '/login', '/login/ott?sent=1', '/account']) {
      const answer = await fetch(`${other}${path}`, { redirect: 'manual' });
      expect(answer.status, path).toBe(307);
      expect(answer.headers.get('location'), path).toBe(`${base}${path}`);
    }
  });

  it('at PUBLIC_URL itself the pages are served; the API and probes answer at any host', async () => {
    expect((await fetch(`${base}/login/ott`, { redirect: 'manual' })).status).toBe(200);
    expect((await fetch(`${other}/healthz`, { redirect: 'manual' })).status).toBe(200);
    const graphql = await fetch(`${other}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":"{ status { service } }"}',
    });
    expect(graphql.status).toBe(200);
  });
});

describe("production: no such redirect (the proxy and PUBLIC_URL are the operator's)", () => {
  it('a page at another host is answered where it was asked', async () => {
    const { service, base } = await startLocalhostService({ NODE_ENV: 'production' });
    try {
      const answer = await fetch(`${base.replace('localhost', '127.0.0.1')}/login/ott`, { redirect: 'manual' });
      expect(answer.status).not.toBe(307);
    } finally {
      await service.stop();
    }
  });
});
