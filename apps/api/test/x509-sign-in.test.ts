import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { eq, oidcModels, providerSessionFactors, seedDemoData, signInProgress, users } from '@latchkey/db';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/load.js';
import { freePort } from './support/browser-session.js';
import { NodeBrowser, type NodeRequestInit } from './support/node-browser.js';
import { outboxOf, tokenOf } from './support/outbox.js';
import { startTestService, type TestService } from './support/service.js';
import { demoAuthorization } from './support/oidc.js';
import { TestPki, type Issued } from './support/x509.js';

// X.509 client certificates (issue: "X.509 client certificates over an optional HTTPS listener with
// client-certificate verification, mapped to users by configuration (contributes X509, hwk)").

const UNTRUSTED = 'A client certificate from a trusted authority is required.';
const UNMAPPED = 'This client certificate does not belong to an active account.';

let pki: TestPki;
let serverCa: Issued;
let serverCert: Issued;
let clientCa: Issued;
/** certificates of the trusted client authority */
let alice: Issued;
let carol: Issued;
let erin: Issued;
let device: Issued;
let stranger: Issued;
/** alice's subject, issued by another authority that even carries the trusted authority's name */
let impostor: Issued;
let files: { cert: string; key: string; ca: string; users: string; policy: string };

let service: TestService;
let base: string;
let tlsBase: string;

beforeAll(async () => {
  pki = new TestPki();
  serverCa = pki.authority('server-ca', '/CN=Latchkey Test Server CA');
  serverCert = pki.issue('server', serverCa, '/CN=localhost', ['DNS:localhost', 'IP:127.0.0.1']);
  clientCa = pki.authority('client-ca', '/O=Acme/CN=Acme Client CA');
  const otherCa = pki.authority('other-ca', '/O=Acme/CN=Acme Client CA');
  alice = pki.issue('alice', clientCa, '/O=Acme/CN=alice');
  carol = pki.issue('carol', clientCa, '/O=Globex/CN=carol');
  erin = pki.issue('erin', clientCa, '/O=Acme/CN=erin');
  device = pki.issue('device', clientCa, '/O=Acme/CN=device-42');
  stranger = pki.issue('stranger', clientCa, '/O=Acme/CN=stranger');
  impostor = pki.issue('impostor', otherCa, '/O=Acme/CN=alice');
  files = {
    cert: serverCert.certFile,
    key: serverCert.keyFile,
    ca: clientCa.certFile,
    users: pki.file(
      'x509-users.json',
      JSON.stringify({
        users: [
          // Subjects in any attribute order and case; a fingerprint in any hex form.
          { subject: 'cn=Alice, O=Acme', email: 'alice@acme.test' },
          { subject: 'O=Globex,CN=carol', email: 'Carol@Globex.test' },
          { subject: 'O=Acme,CN=erin', email: 'erin@acme.test' },
          { fingerprint256: device.fingerprint256.replace(/:/g, '').toLowerCase(), email: 'bob@acme.test' },
        ],
      }),
    ),
    // carol (only) must sign in with her certificate.
    policy: pki.file(
      'auth-policy.json',
      JSON.stringify({
        rules: [{ name: 'carol-certificate', appliesTo: { users: ['carol@globex.test'] }, anyOf: [[{ factor: 'X509' }]] }],
      }),
    ),
  };
  const port = await freePort();
  const tlsPort = await freePort();
  base = `http://localhost:${port}`;
  service = await startTestService({
    PORT: String(port),
    PUBLIC_URL: base,
    TLS_PORT: String(tlsPort),
    TLS_CERT_FILE: files.cert,
    TLS_KEY_FILE: files.key,
    TLS_CLIENT_CA_FILE: files.ca,
    X509_USERS_FILE: files.users,
    AUTH_POLICY_FILE: files.policy,
  });
  tlsBase = `https://localhost:${tlsPort}`;
  await seedDemoData(service.database);
}, 60_000);
afterAll(async () => {
  await service?.stop();
  pki?.remove();
});

/**
 * The rate limits count per client address: requests come from their own loopback address (127.0.9.x, ...)
 * unless a test picks one, so each test sees the limiter only where it means to.
 */
let addresses = 0;
const freshAddress = () => `127.0.${9 + Math.floor(addresses / 250)}.${1 + (addresses++ % 250)}`;

/** One browser's cookies over node:http and node:https (one jar for both listeners: cookies know no ports), sent from an address of its own. */
class Browser extends NodeBrowser {
  constructor() {
    super(base, { connectTo: { host: '127.0.0.1' }, from: freshAddress(), ca: serverCa.cert });
  }
}

/** What a sign-in stores: provider models (sessions, interactions), sign-ins in progress, session factors. */
async function stored(): Promise<string> {
  const { db } = service.database;
  const rows = await Promise.all([
    db.select().from(oidcModels),
    db.select().from(signInProgress),
    db.select().from(providerSessionFactors),
  ]);
  return createHash('sha256')
    .update(JSON.stringify(rows, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value)))
    .digest('hex');
}

describe('X.509 sign-in on the TLS listener', () => {
  it('a certificate from the trusted authority mapped to alice signs her in to an application: an ID token with amr hwk, acr phr', async () => {
    const browser = new Browser();
    const application = demoAuthorization(base);
    const start = await browser.request(application.path);
    expect(start.status).toBe(303);
    const interaction = start.location!;
    expect((await browser.request(interaction)).status).toBe(200);

    // The listener's own page offers the button; its form may redirect to PUBLIC_URL.
    const page = await browser.request(`${tlsBase}/login/x509`, { cert: alice });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<form method="post" action="/login/x509">');
    expect(page.headers['content-security-policy']).toContain(`form-action 'self' ${base}`);

    // Posted from PUBLIC_URL's sign-in page (Origin: PUBLIC_URL), the sign-in goes back there.
    const signedIn = await browser.request(`${tlsBase}/login/x509`, { form: {}, cert: alice, headers: { origin: base } });
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe(`${base}${interaction}`);
    const finished = await browser.request(signedIn.location!);
    expect(finished.status).toBe(303);
    const resumed = await browser.request(finished.location!);
    const tokens = await application.redeem(resumed.location!);
    expect(tokens.status).toBe(200);
    const idToken = decodeJwt(tokens.json.id_token);
    expect(idToken).toMatchObject({ iss: base, amr: ['hwk'], acr: 'urn:latchkey:acr:phr', email: 'alice@acme.test' });
  });

  it('without an application the browser lands on the account page, which shows alice on either listener (JSON caller)', async () => {
    const browser = new Browser();
    const signedIn = await browser.request(`${tlsBase}/login/x509`, { json: {}, cert: alice });
    expect(signedIn.status).toBe(200);
    expect(signedIn.json).toEqual({ status: 'signed-in', continue: `${base}/account` });
    const account = await browser.request(signedIn.json.continue);
    expect(account.status).toBe(200);
    expect(account.text).toContain('alice@acme.test');
    const overTls = await browser.request(`${tlsBase}/account`);
    expect(overTls.status).toBe(200);
    expect(overTls.text).toContain('alice@acme.test');
  });

  it('a certificate mapped by its fingerprint signs in its account (bob); a bodiless POST is enough', async () => {
    const browser = new Browser();
    const signedIn = await browser.request(`${tlsBase}/login/x509`, { method: 'POST', cert: device, headers: { accept: 'text/html' } });
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe(`${base}/account`);
    expect((await browser.request(signedIn.location!)).text).toContain('bob@acme.test');
  });

  it('a rule that requires X509: a one-time token alone is not enough; the certificate completes the sign-in', async () => {
    const outbox = outboxOf(service.config.dataDir);
    const browser = new Browser();
    const before = outbox.count();
    expect((await browser.request('/ott/generate', { form: { username: 'carol@globex.test' } })).status).toBe(303);
    const halfway = await browser.request('/login/ott', { form: { token: tokenOf(await outbox.next(before, 'carol@globex.test')) } });
    expect(halfway.location).toBe('/login/factors');
    const factors = await browser.request('/login/factors');
    expect(factors.text).toContain('<li>a client certificate</li>');
    const signedIn = await browser.request(`${tlsBase}/login/x509`, { form: {}, cert: carol, headers: { origin: base } });
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe(`${base}/account`);
    expect((await browser.request('/account')).text).toContain('carol@globex.test');
    // And the certificate alone meets carol's rule.
    const alone = await new Browser().request(`${tlsBase}/login/x509`, { json: {}, cert: carol });
    expect(alone.json).toEqual({ status: 'signed-in', continue: `${base}/account` });
  });
});

describe('X.509 refusals change nothing', () => {
  it.each([
    ["a certificate from another authority (with the trusted one's name and alice's subject)", () => impostor, UNTRUSTED],
    ['no certificate', () => undefined, UNTRUSTED],
    ['a trusted certificate mapped to nobody', () => stranger, UNMAPPED],
  ])('%s: 401, no cookie, nothing stored', async (_name, cert, message) => {
    const before = await stored();
    const browser = new Browser();
    const refused = await browser.request(`${tlsBase}/login/x509`, { json: {}, cert: cert() });
    expect(refused.status).toBe(401);
    expect(refused.json).toEqual({ statusCode: 401, message, error: 'Unauthorized' });
    expect(refused.headers['set-cookie']).toBeUndefined();
    // A page gets the same refusal as a page.
    const asPage = await new Browser().request(`${tlsBase}/login/x509`, { form: {}, cert: cert() });
    expect(asPage.status).toBe(401);
    expect(asPage.headers['content-type']).toContain('text/html');
    expect(asPage.text).toContain(message);
    expect(await stored()).toBe(before);
  });

  it('a suspended account is refused like an unmapped certificate', async () => {
    await service.database.db.update(users).set({ suspended: true }).where(eq(users.email, 'erin@acme.test'));
    const before = await stored();
    const refused = await new Browser().request(`${tlsBase}/login/x509`, { json: {}, cert: erin });
    expect(refused.status).toBe(401);
    expect(refused.json.message).toBe(UNMAPPED);
    expect(await stored()).toBe(before);
  });

  it('the plain listener has no /login/x509 (404, whatever the method or certificate)', async () => {
    const browser = new Browser();
    for (const init of [{ json: {} }, { method: 'GET' }, { method: 'DELETE' }] satisfies NodeRequestInit[]) {
      const answer = await browser.request('/login/x509', init);
      expect(answer.status).toBe(404);
    }
    expect((await browser.request('/login/x509', { json: {} })).json.message).toBe(
      'Sign-in with a client certificate is only available on the TLS listener.',
    );
  });

  it('cross-site posts are refused (403) before anything else; the wrong method is 405', async () => {
    const before = await stored();
    const browser = new Browser();
    const crossSite = await browser.request(`${tlsBase}/login/x509`, {
      json: {},
      cert: alice,
      headers: { origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(403);
    const opaque = await browser.request(`${tlsBase}/login/x509`, {
      form: {},
      cert: alice,
      headers: { origin: 'null', 'sec-fetch-site': 'cross-site' },
    });
    expect(opaque.status).toBe(403);
    // An origin on this host's other port is not this listener's origin either.
    const otherPort = await browser.request(`${tlsBase}/login/x509`, {
      form: {},
      cert: alice,
      headers: { origin: `https://localhost:${new URL(base).port}` },
    });
    expect(otherPort.status).toBe(403);
    expect(crossSite.headers['set-cookie']).toBeUndefined();
    const put = await browser.request(`${tlsBase}/login/x509`, { method: 'PUT', cert: alice, headers: { accept: 'application/json' } });
    expect(put.status).toBe(405);
    expect(put.headers['allow']).toBe('GET, HEAD, POST');
    expect(await stored()).toBe(before);
  });

  it('bad bodies are 4xx, never 5xx, and store nothing', async () => {
    const before = await stored();
    const browser = new Browser();
    const cases: [NodeRequestInit, number][] = [
      [{ body: 'x'.repeat(5000), headers: { 'content-type': 'application/x-www-form-urlencoded', origin: tlsBase } }, 413],
      [{ body: 'hello', headers: { 'content-type': 'text/plain', origin: tlsBase } }, 415],
      [{ body: '{nope', headers: { 'content-type': 'application/json', origin: tlsBase } }, 400],
      [{ body: '[1]', headers: { 'content-type': 'application/json', origin: tlsBase } }, 400],
      [{ json: { remember: 1 } }, 400],
    ];
    for (const [init, status] of cases) {
      const answer = await browser.request(`${tlsBase}/login/x509`, { ...init, cert: alice });
      expect({ body: init.body?.slice(0, 10), status: answer.status }).toEqual({ body: init.body?.slice(0, 10), status });
    }
    expect(await stored()).toBe(before);
  });

  it('rate limit and lockout: refusals pause, then stop, the source (429 with Retry-After), even for a good certificate', async () => {
    const from = freshAddress();
    const statuses: number[] = [];
    let retryAfter: string | undefined;
    for (let attempt = 0; attempt < 8; attempt++) {
      const answer = await new Browser().request(`${tlsBase}/login/x509`, { json: {}, cert: impostor, from });
      statuses.push(answer.status);
      if (answer.status === 429) retryAfter = answer.headers['retry-after'] as string;
    }
    expect(statuses[0]).toBe(401);
    expect(statuses).toContain(429);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    const good = await new Browser().request(`${tlsBase}/login/x509`, { json: {}, cert: alice, from });
    expect(good.status).toBe(429);
    expect(good.json.message).toMatch(/^Too many attempts/);
  });
});

describe('configuration: start-up refuses a listener or rule that cannot work', () => {
  const readFile = (file: string) => readFileSync(file, 'utf8');
  const tlsEnv = () => ({
    NODE_ENV: 'test',
    TLS_PORT: '8443',
    TLS_CERT_FILE: files.cert,
    TLS_KEY_FILE: files.key,
    TLS_CLIENT_CA_FILE: files.ca,
    X509_USERS_FILE: files.users,
  });
  const load = (env: Record<string, string | undefined>) => () => loadConfig({ env, readFile });
  const x509Rule = () =>
    pki.file(
      'x509-rule.json',
      JSON.stringify({ rules: [{ name: 'certs', appliesTo: { everyone: true }, anyOf: [[{ factor: 'X509' }]] }] }),
    );

  it('a rule requiring X509 stops start-up unless the TLS listener verifies client certificates and maps them', () => {
    const AUTH_POLICY_FILE = x509Rule();
    expect(load({ NODE_ENV: 'test', AUTH_POLICY_FILE })).toThrow(/requires X509, which nothing on this server contributes/);
    expect(load({ ...tlsEnv(), TLS_CLIENT_CA_FILE: undefined, X509_USERS_FILE: undefined, AUTH_POLICY_FILE })).toThrow(/requires X509/);
    expect(load({ ...tlsEnv(), AUTH_POLICY_FILE })).not.toThrow();
    // (The service of this file starts with a rule requiring X509.)
    expect(service.config.auth.signInPolicy.contributed.has('X509')).toBe(true);
    expect(service.tlsUrl).toBe(`https://127.0.0.1:${new URL(tlsBase).port}`);
  });

  it("the parsed configuration: the listener's PEM files, fingerprints in node's form, subjects in any order and case", () => {
    const config = loadConfig({ env: tlsEnv(), readFile });
    expect(config.http.tls).toEqual({ port: 8443, cert: serverCert.cert, key: serverCert.key, clientCa: clientCa.cert });
    expect(config.auth.clientCertificates!.byFingerprint.get(device.fingerprint256)).toBe('bob@acme.test');
    expect([...config.auth.clientCertificates!.bySubject.values()]).toEqual(['alice@acme.test', 'carol@globex.test', 'erin@acme.test']);
    const plain = loadConfig({ env: { NODE_ENV: 'test' } });
    expect(plain.http.tls).toBeUndefined();
    expect(plain.auth.clientCertificates).toBeUndefined();
    // A listener without client certificates: HTTPS only, no X509.
    expect(
      loadConfig({ env: { ...tlsEnv(), TLS_CLIENT_CA_FILE: undefined, X509_USERS_FILE: undefined }, readFile }).http.tls?.clientCa,
    ).toBeUndefined();
  });

  it.each([
    [
      'TLS_CLIENT_CA_FILE without TLS_PORT',
      { TLS_PORT: undefined, TLS_CERT_FILE: undefined, TLS_KEY_FILE: undefined, X509_USERS_FILE: undefined },
      /TLS_CLIENT_CA_FILE: only used with TLS_PORT/,
    ],
    ['TLS_PORT without its certificate', { TLS_CERT_FILE: undefined }, /TLS_PORT: needs TLS_CERT_FILE and TLS_KEY_FILE/],
    ['X509_USERS_FILE without TLS_CLIENT_CA_FILE', { TLS_CLIENT_CA_FILE: undefined }, /TLS_CLIENT_CA_FILE and X509_USERS_FILE go together/],
    ['TLS_CLIENT_CA_FILE without X509_USERS_FILE', { X509_USERS_FILE: undefined }, /TLS_CLIENT_CA_FILE and X509_USERS_FILE go together/],
    ['the same port twice', { PORT: '8443' }, /TLS_PORT: must differ from PORT/],
    ['a missing file', { TLS_CERT_FILE: '/nonexistent/cert.pem' }, /TLS_CERT_FILE: cannot read \/nonexistent\/cert\.pem/],
    ['a certificate file without a certificate', { TLS_CERT_FILE: 'KEY' }, /TLS_CERT_FILE: .* holds no PEM certificate/],
    ['a key file without a key', { TLS_KEY_FILE: 'CERT' }, /TLS_KEY_FILE: .* holds no unencrypted PEM private key/],
    ['a key of another certificate', { TLS_KEY_FILE: 'ALICE_KEY' }, /TLS_KEY_FILE: the key does not belong to the certificate/],
    ['a CA file without certificates', { TLS_CLIENT_CA_FILE: 'KEY' }, /TLS_CLIENT_CA_FILE: .* holds no PEM certificate/],
    ['a bad port', { TLS_PORT: '70000' }, /TLS_PORT/],
  ])('%s', (_name, overrides, message) => {
    const named: Record<string, () => string> = { KEY: () => files.key, CERT: () => files.cert, ALICE_KEY: () => alice.keyFile };
    const env: Record<string, string | undefined> = { ...tlsEnv() };
    for (const [name, value] of Object.entries(overrides)) env[name] = value && named[value] ? named[value]() : value;
    expect(load(env)).toThrow(ConfigError);
    expect(load(env)).toThrow(message);
  });

  it.each([
    ['not JSON', '{ users', /X509_USERS_FILE: not valid JSON/],
    ['no users', { users: [] }, /X509_USERS_FILE: users: /],
    ['unknown keys', { users: [{ subject: 'CN=a', email: 'a@b.test', role: 'x' }] }, /X509_USERS_FILE: users\.0: /],
    ['not an e-mail', { users: [{ subject: 'CN=a', email: 'alice' }] }, /X509_USERS_FILE: users\.0\.email: must be an e-mail address/],
    [
      'both keys',
      { users: [{ subject: 'CN=a', fingerprint256: 'AB', email: 'a@b.test' }] },
      /users\.0: give either fingerprint256 or subject/,
    ],
    ['neither key', { users: [{ email: 'a@b.test' }] }, /users\.0: give either fingerprint256 or subject/],
    [
      'a short fingerprint',
      { users: [{ fingerprint256: 'AB:CD', email: 'a@b.test' }] },
      /users\.0\.fingerprint256: must be a SHA-256 fingerprint/,
    ],
    ['a subject that is no name', { users: [{ subject: 'alice', email: 'a@b.test' }] }, /users\.0\.subject: must be a distinguished name/],
    ['an empty value', { users: [{ subject: 'CN=', email: 'a@b.test' }] }, /users\.0\.subject: must be a distinguished name/],
    [
      'one subject twice',
      {
        users: [
          { subject: 'CN=a,O=b', email: 'a@b.test' },
          { subject: 'o=B, cn=A', email: 'c@b.test' },
        ],
      },
      /users\.1\.subject: this subject is listed twice/,
    ],
  ])('X509_USERS_FILE: %s is refused with its path', (_name, content, message) => {
    const X509_USERS_FILE = pki.file(
      `users-${randomBytes(4).toString('hex')}.json`,
      typeof content === 'string' ? content : JSON.stringify(content),
    );
    expect(load({ ...tlsEnv(), X509_USERS_FILE })).toThrow(message);
  });
});
