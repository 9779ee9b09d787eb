import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawPost, startTestService, type TestService } from './support/service.js';

const ALLOWED = 'https://app.example.test';
const OTHER = 'https://evil.example.test';

let service: TestService;
let url: string;
beforeAll(async () => {
  service = await startTestService({ CORS_ORIGINS: `${ALLOWED}, http://localhost:5173` });
  url = service.graphqlUrl;
});
afterAll(() => service?.stop());

describe('spec Cross-site 1 and Endpoints OPTIONS: CORS preflight', () => {
  it('allowed origin: 204 echoing the origin, methods POST, GET, headers content-type, authorization, dpop and the client-name headers', async () => {
    const res = await fetch(url, {
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, authorization, graphql-client-name, apollographql-client-name',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(res.headers.get('access-control-allow-methods')).toBe('POST, GET');
    expect(res.headers.get('access-control-allow-headers')).toBe(
      'content-type, authorization, dpop, graphql-client-name, apollographql-client-name',
    );
    expect(res.headers.get('vary')).toContain('Origin');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('refused origin: no Access-Control-Allow-Origin at all (never *, never null)', async () => {
    const res = await fetch(url, {
      method: 'OPTIONS',
      headers: { origin: OTHER, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-allow-methods')).toBeNull();
    expect(res.headers.get('access-control-allow-headers')).toBeNull();
  });

  it('an origin that only resembles an allowed one is refused (exact match)', async () => {
    for (const origin of [`${ALLOWED}.evil.test`, 'http://app.example.test', `${ALLOWED}:443`, 'null']) {
      const res = await fetch(url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('actual requests carry the allow-origin only for an allowed origin, and always Vary: Origin', async () => {
    const body = JSON.stringify({ query: '{ __typename }' });
    const allowed = await fetch(url, { method: 'POST', headers: { origin: ALLOWED, 'content-type': 'application/json' }, body });
    expect(allowed.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(allowed.headers.get('vary')).toContain('Origin');
    const other = await fetch(url, { method: 'POST', headers: { origin: OTHER, 'content-type': 'application/json' }, body });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('vary')).toContain('Origin');
  });
});

/** Raw request, so the exact Content-Type (or none) reaches the server. */
const rawPostOf = (contentType: string | undefined, body: string) => rawPost(url, body, contentType ? { 'content-type': contentType } : {});

describe('spec Cross-site 2: non-JSON POST bodies are refused (CSRF)', () => {
  const query = '{ status { service } }';
  it.each([
    ['form-encoded', 'application/x-www-form-urlencoded', `query=${encodeURIComponent(query)}`],
    ['multipart', 'multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="query"\r\n\r\n${query}\r\n--x--\r\n`],
    ['text/plain', 'text/plain', JSON.stringify({ query })],
    ['text/plain with charset', 'text/plain;charset=UTF-8', JSON.stringify({ query })],
    ['application/graphql', 'application/graphql', query],
    ['missing content type', undefined, JSON.stringify({ query })],
    ['JSON in another charset', 'application/json; charset=latin1', JSON.stringify({ query })],
  ])('%s -> 415 UNSUPPORTED_MEDIA_TYPE and nothing executes', async (_name, type, body) => {
    const res = await rawPostOf(type, body);
    expect(res.status).toBe(415);
    const json = JSON.parse(res.body);
    expect(json.errors[0].extensions.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(json.data).toBeUndefined();
    expect(res.body).not.toContain('latchkey');
  });

  it('a cross-site form POST from a foreign Origin is refused', async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { origin: OTHER, 'content-type': 'application/x-www-form-urlencoded' },
      body: `query=${encodeURIComponent(query)}`,
    });
    expect(res.status).toBe(415);
  });
});
