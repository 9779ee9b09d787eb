import { seedDemoData } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { demoOf, type Demo } from './support/demo.js';
import { startTestService, type TestService } from './support/service.js';

let service: TestService;
let demo: Demo;
const origin = 'http://localhost:4000'; // the test service's PUBLIC_URL: RP ID localhost

beforeAll(async () => {
  service = await startTestService();
  await seedDemoData(service.database);
  demo = await demoOf(service);
});
afterAll(() => service?.stop());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  new BrowserSession(service.url).request(path, { json: body, headers: { origin, accept: 'application/json', ...headers } });

describe('passkey endpoints over HTTP (spec Passkeys; ceremonies themselves run in Chromium tests)', () => {
  it('registration needs a signed-in caller: none 401, a bad token 401 invalid_token, a user gets creation options', async () => {
    const none = await post('/webauthn/register/options', {});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    const bad = await post('/webauthn/register/options', {}, { authorization: 'Bearer not.a.token' });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toContain('invalid_token');
    const ok = await post('/webauthn/register/options', {}, { authorization: `Bearer ${await demo.token('alice')}` });
    expect(ok.status).toBe(200);
    const options = JSON.parse(ok.text) as {
      rp: { id: string; name: string };
      user: { name: string };
      challenge: string;
      authenticatorSelection: { residentKey: string };
    };
    expect(options.rp).toEqual({ id: 'localhost', name: 'Latchkey' });
    expect(options.user.name).toBe('alice@acme.test');
    expect(options.challenge).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(options.authenticatorSelection.residentKey).toBe('required');
    expect(ok.headers.getSetCookie().join(';')).toMatch(/lk_webauthn=.*HttpOnly/i);
  });

  it('spec Multi-factor rules 6 / RFC 9470: adding a passkey is a credential change and needs a sign-in from the last 5 minutes', async () => {
    const stale = await demo.token('alice', { authTime: Math.floor(Date.now() / 1000) - 301 });
    const refused = await post('/webauthn/register/options', {}, { authorization: `Bearer ${stale}` });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_user_authentication", error_description="More recent authentication is required", max_age=300',
    );
    expect(JSON.parse(refused.text)).toMatchObject({ statusCode: 401, code: 'INSUFFICIENT_USER_AUTHENTICATION', max_age: 300 });
    const fresh = await demo.token('alice', { authTime: Math.floor(Date.now() / 1000) - 10 });
    expect((await post('/webauthn/register/options', {}, { authorization: `Bearer ${fresh}` })).status).toBe(200);
  });

  it('sign-in options reveal nothing about accounts: the same shape for a known and an unknown username', async () => {
    const shape = (text: string) => {
      const options = JSON.parse(text) as Record<string, unknown>;
      return { keys: Object.keys(options).sort(), allowCredentials: options['allowCredentials'] ?? [], rpId: options['rpId'] };
    };
    const known = await post('/webauthn/authenticate/options', { username: 'alice@acme.test' });
    const unknown = await post('/webauthn/authenticate/options', { username: 'ghost@nowhere.test' });
    const none = await post('/webauthn/authenticate/options', {});
    expect(known.status).toBe(200);
    expect(shape(known.text)).toEqual(shape(unknown.text));
    expect(shape(known.text)).toEqual(shape(none.text));
    expect(shape(known.text).allowCredentials).toEqual([]);
  });

  it('bad input on every passkey endpoint is a 4xx with a clear message, never a 5xx', async () => {
    const token = `Bearer ${await demo.token('alice')}`;
    expect((await post('/login/webauthn', {})).status).toBe(400);
    const forged = await post('/login/webauthn', {
      response: {
        id: 'abc',
        rawId: 'abc',
        type: 'public-key',
        response: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: 'AA' },
        clientExtensionResults: {},
      },
    });
    expect(forged.status).toBe(400);
    expect(JSON.parse(forged.text)).toMatchObject({ statusCode: 400, error: 'Bad Request', code: expect.stringMatching(/^PASSKEY_/) });
    expect((await post('/webauthn/register', { response: 'nope' }, { authorization: token })).status).toBe(400);
    expect((await post('/webauthn/register', { response: { id: 'x', response: {} }, label: 42 }, { authorization: token })).status).toBe(
      400,
    );
    const garbage = await fetch(`${service.url}/login/webauthn`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: '{oops',
    });
    expect(garbage.status).toBe(400);
    const form = await fetch(`${service.url}/webauthn/authenticate/options`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: 'username=a',
    });
    expect(form.status).toBe(415);
    const huge = await fetch(`${service.url}/login/webauthn`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ response: 'x'.repeat(20_000) }),
    });
    expect(huge.status).toBe(413);
    expect((await fetch(`${service.url}/login/webauthn`)).status).toBe(405);
    expect((await post('/webauthn/authenticate/options', {}, { origin: 'https://evil.example' })).status).toBe(403);
  });

  it('without a usable RP ID (PUBLIC_URL is an IP address and RP_ID unset) passkeys are switched off: 404 says so', async () => {
    const ipService = await startTestService({ PUBLIC_URL: 'http://127.0.0.1:4000' });
    try {
      const answer = await fetch(`${ipService.url}/webauthn/authenticate/options`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(answer.status).toBe(404);
      expect(await answer.text()).toContain('RP_ID');
    } finally {
      await ipService.stop();
    }
  });
});
