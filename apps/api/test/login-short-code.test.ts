import { createHash, randomBytes } from 'node:crypto';
import { randomToken } from '@latchkey/auth';
import { eq, oneTimeTokens, seedDemoData } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from './support/chromium.js';
import { NodeBrowser, type NodeAnswer, type NodeRequestInit } from './support/node-browser.js';
import { codeOf, outboxOf } from './support/outbox.js';
import { startLocalhostService, type TestService } from './support/service.js';

// The short code (issue: "a short numeric code for typing, looked up by username and code together and bound to
// the browser that asked for it, with a small attempt budget after which the code dies").
let service: TestService;
let base: string;

beforeAll(async () => {
  ({ service, base } = await startLocalhostService({ NODE_ENV: 'development' }));
  await seedDemoData(service.database);
});
afterAll(() => service?.stop());

/** Every answer the server gave in this file, for the "the code is never in a response" check. */
const answers: string[] = [];
/** Every code delivered in this file. */
const codes: string[] = [];

/**
 * The rate limits count per client address, and every wrong token or code from one address pauses, then stops
 * it. Requests here come from their own loopback address (127.0.1.x, ...) unless a test picks one, so each test
 * sees the limiter only where it means to.
 */
let addresses = 0;
const freshAddress = () => `127.0.${1 + Math.floor(addresses / 250)}.${1 + (addresses++ % 250)}`;

/** One browser's cookie jar over node:http, each request from a fresh loopback address unless it names one. */
class Browser extends NodeBrowser {
  constructor() {
    super(base, { connectTo: { host: '127.0.0.1' } });
  }

  override async request(target: string, init: NodeRequestInit = {}): Promise<NodeAnswer> {
    const answer = await super.request(target, { ...init, from: init.from ?? freshAddress() });
    answers.push(JSON.stringify(answer.headers), answer.text);
    return answer;
  }

  generate(username: string, from?: string) {
    return this.request('/ott/generate', { form: { username }, from });
  }

  useCode(username: string, code: string, from?: string) {
    return this.request('/login/ott', { form: { username, code }, from });
  }

  useLink(magicLink: string, from?: string) {
    return this.request('/login/ott', { form: { token: new URL(magicLink).searchParams.get('token')! }, from });
  }
}

const outbox = () => outboxOf(service.config.dataDir);
const outboxCount = () => outbox().count();
/**
 * The message to `to` that arrives after `count` earlier ones, with the code read from its text. (Deliveries of
 * earlier tests may still be arriving: only a message to this address counts.)
 */
async function nextMessage(count: number, to: string) {
  const message = await outbox().next(count, to);
  const code = codeOf(message);
  codes.push(code);
  return { ...message, code };
}

/** Asks for a link and code in `browser`; returns the delivered message. */
async function ask(browser: Browser, username: string) {
  const before = outboxCount();
  const answer = await browser.generate(username);
  expect(answer.status).toBe(303);
  return nextMessage(before, username.trim().toLowerCase());
}

const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');
const bindingHashOf = (browser: Browser) => createHash('sha256').update(browser.cookies.get('lk_code')!).digest('base64url');
async function storedRow(browser: Browser) {
  const [row] = await service.database.db
    .select()
    .from(oneTimeTokens)
    .where(eq(oneTimeTokens.bindingHash, bindingHashOf(browser)));
  return row;
}

/** Starts an authorization-code + PKCE request of the demo client in `browser` and opens its sign-in page. */
async function startAuthorization(browser: Browser): Promise<string> {
  const params = new URLSearchParams({
    client_id: 'latchkey-demo',
    response_type: 'code',
    redirect_uri: `${base}/callback`,
    scope: 'openid email',
    code_challenge: createHash('sha256').update(randomToken()).digest('base64url'),
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
  });
  const start = await browser.request(`/oidc/auth?${params}`);
  expect(start.status).toBe(303);
  const interaction = start.location!;
  expect(interaction).toMatch(/^\/interaction\/[A-Za-z0-9_-]+$/);
  expect((await browser.request(interaction)).status).toBe(200);
  return interaction;
}

describe('short codes at POST /ott/generate and POST /login/ott', () => {
  it('the code from the message signs in the browser that asked, once; the link of the same message dies with it, and vice versa', async () => {
    const browser = new Browser();
    const interaction = await startAuthorization(browser);
    const generated = await browser.generate('alice@acme.test');
    expect(generated.status).toBe(303);
    expect(generated.location).toBe('/login/ott?sent=1');
    const binding = generated.setCookies.find((line) => line.startsWith('lk_code='))!;
    expect(binding).toMatch(/^lk_code=[A-Za-z0-9_-]{43}; /);
    expect(binding).toMatch(/; HttpOnly/i);
    expect(binding).toMatch(/; SameSite=Strict/i);
    expect(binding).toMatch(/; Path=\/login(;|$)/);
    const message = await nextMessage(0, 'alice@acme.test');
    expect(message.to).toBe('alice@acme.test');
    // Stored only as hashes: neither the code nor the browser binding is in the table.
    const stored = JSON.stringify(await service.database.db.select().from(oneTimeTokens));
    expect(stored).not.toContain(browser.cookies.get('lk_code'));
    expect(stored).not.toMatch(new RegExp(`(?<![0-9])${message.code}(?![0-9])`));

    // The "check your messages" page offers the code form, and echoes nothing from the query string.
    const sent = await browser.request('/login/ott?sent=1&username=%3Cscript%3Ex%3C%2Fscript%3E');
    expect(sent.status).toBe(200);
    // One field, labelled for what it takes: the message's code, or its link's token.
    expect(sent.text).toContain('<label for="token">The 6-digit code from the message (or the token of its link)</label>');
    expect(sent.text).toContain('name="token" autocomplete="one-time-code"');
    expect(sent.text.match(/<input /g)).toHaveLength(1);
    expect(sent.text).not.toContain('<script>x');

    const signedIn = await browser.useCode('Alice@Acme.test', message.code);
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe(interaction);
    expect(browser.cookies.get('lk_signin')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The sign-in in progress completes the pending authorization request.
    const finished = await browser.request(interaction);
    expect(finished.status).toBe(303);
    expect(finished.location).toMatch(/\/oidc\/auth\//);

    // Once: the code again, and the link of the same message, sign nobody in.
    const again = await browser.useCode('alice@acme.test', message.code);
    expect(again.status).toBe(401);
    expect(again.text).toContain('The sign-in link or code is invalid or has expired.');
    expect((await browser.useLink(message.magicLink)).status).toBe(401);

    // And the other way round: the link used, the code of its message is dead.
    const second = await ask(browser, 'alice@acme.test');
    expect((await browser.useLink(second.magicLink)).status).toBe(303);
    expect((await browser.useCode('alice@acme.test', second.code)).status).toBe(401);
  });

  it("another browser with the right username and code is refused, and uses up nothing of the asking browser's budget", async () => {
    const owner = new Browser();
    const message = await ask(owner, 'bob@acme.test');
    const ownerBinding = owner.cookies.get('lk_code')!;

    const strangers = [new Browser(), new Browser(), new Browser()];
    // One without any binding, one with a made-up one, one with a binding of its own (it asked for bob too).
    strangers[1]!.cookies.set('lk_code', randomToken());
    const own = await ask(strangers[2]!, 'bob@acme.test');
    expect(strangers[2]!.cookies.get('lk_code')).not.toBe(ownerBinding);
    for (const [index, stranger] of strangers.entries()) {
      for (let i = 0; i < 6; i++) {
        const refused = await stranger.useCode('bob@acme.test', message.code);
        if (index === 0) {
          // No binding at all: nothing is looked up, so nothing was compared (a form error, not a wrong try).
          expect(refused.status).toBe(400);
          expect(refused.text).toContain('A code works only in the browser that asked for it.');
        } else {
          expect(refused.status).toBe(401);
          expect(refused.text).toContain('The sign-in link or code is invalid or has expired.');
        }
      }
    }
    expect(await storedRow(owner)).toMatchObject({ codeAttempts: 0 });
    // The stranger's own code (sent to bob, not to the stranger) is no use to the owner's browser either.
    expect((await owner.useCode('bob@acme.test', own.code)).status).toBe(401);

    const signedIn = await owner.request('/login/ott', { json: { username: 'bob@acme.test', code: message.code } });
    expect(signedIn.status).toBe(303);
  });

  it("the asking browser's own budget: after 5 wrong codes the code is dead, but the link of the message still works", async () => {
    const browser = new Browser();
    const message = await ask(browser, 'carol@globex.test');
    // Each guess from another address, as a guesser would: the per-source limiter alone would not stop them.
    for (let i = 0; i < 5; i++) expect((await browser.useCode('carol@globex.test', wrong(message.code))).status).toBe(401);
    expect(await storedRow(browser)).toBeUndefined(); // the code columns are cleared ...
    expect((await browser.useCode('carol@globex.test', message.code)).status).toBe(401);
    expect((await browser.useLink(message.magicLink)).status).toBe(303); // ... the link lives on
  });

  it('a source stopped for sending wrong tokens also loses the outstanding codes of its browser; their links still work', async () => {
    const browser = new Browser();
    const message = await ask(browser, 'erin@acme.test');
    const source = freshAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 4 && !statuses.includes(429); i++)
      statuses.push((await browser.request('/login/ott', { form: { token: 'A'.repeat(43) }, from: source })).status);
    expect(statuses.slice(0, 2)).toEqual([401, 401]);
    expect(statuses).toContain(429);
    expect(await storedRow(browser)).toBeUndefined();
    // Even from elsewhere, the code is dead now; the magic link is not.
    expect((await browser.useCode('erin@acme.test', message.code)).status).toBe(401);
    expect((await browser.useLink(message.magicLink)).status).toBe(303);
  });

  it('concurrency: of 10 simultaneous right codes from the asking browser exactly one signs in', async () => {
    const browser = new Browser();
    const message = await ask(browser, 'root@latchkey.test');
    const source = freshAddress();
    const results = await Promise.all(Array.from({ length: 10 }, () => browser.useCode('root@latchkey.test', message.code, source)));
    const statuses = results.map((result) => result.status);
    expect(statuses.filter((status) => status === 303)).toHaveLength(1);
    for (const status of statuses.filter((status) => status !== 303)) expect([401, 429]).toContain(status);
  });

  it('single use under concurrency: of 10 simultaneous submissions of one magic link (10 browsers) exactly one signs in', async () => {
    const message = await ask(new Browser(), 'carol@globex.test');
    const results = await Promise.all(Array.from({ length: 10 }, () => new Browser().useLink(message.magicLink)));
    const statuses = results.map((result) => result.status);
    expect(statuses.filter((status) => status === 303)).toHaveLength(1);
    expect(statuses.filter((status) => status === 401)).toHaveLength(9);
  });

  it('rule 3: the generate answer is the same for known and unknown addresses, but for the random binding value', async () => {
    const shape = (answer: NodeAnswer) => ({
      status: answer.status,
      headers: Object.fromEntries(
        Object.entries(answer.headers)
          .filter(([name]) => !['date', 'x-request-id'].includes(name))
          .map(([name, value]) => [
            name,
            name === 'set-cookie' ? (value as string[]).map((line) => line.replace(/^lk_code=[A-Za-z0-9_-]{43};/, 'lk_code=*;')) : value,
          ]),
      ),
      text: answer.text,
    });
    for (const send of [
      (browser: Browser, username: string) => browser.generate(username),
      (browser: Browser, username: string) => browser.request('/ott/generate', { json: { username } }),
    ]) {
      const known = await send(new Browser(), 'carol@globex.test');
      const unknown = await send(new Browser(), 'nobody@nowhere.test');
      expect(known.setCookies).toHaveLength(1);
      expect(unknown.setCookies).toHaveLength(1);
      expect(known.setCookies[0]).not.toBe(unknown.setCookies[0]);
      expect(shape(known)).toEqual(shape(unknown));
      expect(Object.keys(known.headers).sort()).toEqual(Object.keys(unknown.headers).sort());
    }
    // A browser that already has a binding keeps it (codes from its earlier messages stay usable there).
    const browser = new Browser();
    await browser.generate('nobody@nowhere.test');
    const first = browser.cookies.get('lk_code');
    const again = await browser.generate('ghost@nowhere.test');
    expect(again.setCookies[0]).toContain(`lk_code=${first};`);
  });

  it('bad input is a 4xx that consumes nothing and counts nothing against the source', async () => {
    const browser = new Browser();
    const message = await ask(browser, 'alice@acme.test');
    const source = freshAddress();
    const token = new URL(message.magicLink).searchParams.get('token')!;
    const bad: Record<string, unknown>[] = [
      { username: 'alice@acme.test', code: message.code.slice(0, 5) },
      { username: 'alice@acme.test', code: `${message.code}0` },
      { username: 'alice@acme.test', code: 'abcdef' },
      { username: 'alice@acme.test', code: '12 456' },
      { username: 'alice@acme.test', code: '' },
      { username: 'alice@acme.test', code: message.code, token },
      { code: message.code },
      { username: 'not an address', code: message.code },
      { username: 'alice@acme.test' },
      {},
    ];
    for (const fields of bad) {
      const answer = await browser.request('/login/ott', { form: fields as Record<string, string>, from: source });
      expect(answer.status, JSON.stringify(fields)).toBe(400);
      const json = await browser.request('/login/ott', { json: fields, from: source });
      expect(json.status, JSON.stringify(fields)).toBe(400);
      expect(JSON.parse(json.text)).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    }
    expect((await browser.request('/login/ott', { json: { username: 'alice@acme.test', code: 123456 }, from: source })).status).toBe(400);
    expect(await storedRow(browser)).toMatchObject({ codeAttempts: 0 });
    // Not one of those was held against the source (a wrong code would have paused it by now), and the code works.
    expect((await browser.useCode('alice@acme.test', message.code, source)).status).toBe(303);
  });

  it("the page's one field takes the code (this browser's codes only) as well as the link's token", async () => {
    const browser = new Browser();
    const interaction = await startAuthorization(browser);
    const message = await ask(browser, 'alice@acme.test');
    const signedIn = await browser.request('/login/ott', { form: { token: message.code } });
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe(interaction);
    // The same field with a link's token (another message) signs in too, in any browser.
    const other = await ask(new Browser(), 'bob@acme.test');
    expect(
      (await new Browser().request('/login/ott', { form: { token: new URL(other.magicLink).searchParams.get('token')! } })).status,
    ).toBe(303);
  });

  it("a code typed without this browser's binding is a form error that counts nothing; with it, a wrong code counts", async () => {
    const owner = new Browser();
    const message = await ask(owner, 'carol@globex.test');
    const source = freshAddress();
    // A browser without the binding: nothing compared, however often (a wrong try would have paused the source).
    for (let i = 0; i < 8; i++) {
      const refused = await new Browser().request('/login/ott', { form: { token: wrong(message.code) }, from: source });
      expect(refused.status).toBe(400);
    }
    expect(await storedRow(owner)).toMatchObject({ codeAttempts: 0 });
    // The asking browser's wrong code is compared, and counts against its code's budget.
    expect((await owner.request('/login/ott', { form: { token: wrong(message.code) }, from: source })).status).toBe(401);
    expect(await storedRow(owner)).toMatchObject({ codeAttempts: 1 });
  });

  it('no code ever appears in a response or in the service log', () => {
    expect(codes.length).toBeGreaterThanOrEqual(8);
    const everything = `${answers.join('\n')}\n${service.logText()}`;
    for (const code of codes) expect(everything).not.toMatch(new RegExp(`(?<![0-9])${code}(?![0-9])`));
    expect(service.logText()).not.toContain('lk_code');
  });
});

describe.runIf(hasChromium)('in Chromium: the code typed into the page of the browser that asked', () => {
  it('asks on the sign-in form, types the code on the "check your messages" page, and is signed in', async () => {
    const chromium = await launchChromium();
    try {
      const page = await (await chromium.newContext()).newPage();
      await page.goto(`${base}/login/ott`);
      // Ask as the sign-in form does (a same-origin form post), with the address remembered for this tab.
      const before = outboxCount();
      await page.evaluate(async () => {
        sessionStorage.setItem('latchkey:username', 'bob@acme.test');
        await fetch('/ott/generate', { method: 'POST', body: new URLSearchParams({ username: 'bob@acme.test' }) });
      });
      const message = await nextMessage(before, 'bob@acme.test');
      await page.goto(`${base}/login/ott?sent=1`);
      await page.getByLabel('The 6-digit code from the message').fill(message.code);
      const [answer] = await Promise.all([
        page.waitForResponse((response) => response.url() === `${base}/login/ott` && response.request().method() === 'POST'),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      expect(answer.status()).toBe(303);
      const location = answer.headers()['location'];
      expect(location).toBeDefined();
      expect(location).not.toContain('/login/ott');
    } finally {
      await chromium.close();
    }
  });
});
