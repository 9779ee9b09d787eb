import { randomToken } from '@latchkey/auth';
import type { UpstreamProvider } from '@latchkey/auth/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { startPair, type Pair } from './support/upstream-pair.js';

// Upstream callbacks that are not this browser's, replays, cancellations and guessing: refused with a 4xx, nothing
// changed. The service and its upstream provider: support/upstream-pair.ts.

describe('upstream callbacks that do not belong to this browser, replays and cancellations (4xx, nothing changed)', () => {
  let pair: Pair;
  let base: string;
  let upstream: UpstreamProvider;

  beforeAll(async () => {
    pair = await startPair();
    ({ base, upstream } = pair);
  });
  afterAll(() => pair?.stop());

  const stored = () => pair.stored();
  const startUpstream = (browser: BrowserSession) => pair.startUpstream(browser);
  const signInUpstream = (browser: BrowserSession, sub: string) => pair.signInUpstream(browser, sub);

  it('a callback taken to another browser (state) or with its state changed is refused; the right browser still signs in', async () => {
    const before = await stored();
    const mine = new BrowserSession(base);
    const theirs = new BrowserSession(base);
    await startUpstream(theirs);
    const callback = await upstream.authorize(await startUpstream(mine), 'up-alice');
    const stolen = await theirs.request(callback);
    expect(stolen.status).toBe(400);
    expect(stolen.text).toContain('does not belong to a sign-in started in this browser');
    // The refusal is logged without the callback's parameters: that code is still good for the right browser.
    expect(pair.service.logText()).toContain('upstream sign-in refused');
    expect(pair.service.logText()).not.toContain(new URL(callback).searchParams.get('code')!);
    expect((await theirs.request('/account')).location).toBe('/login');
    // The code was not redeemed: the browser that asked for it still signs in with it.
    expect((await mine.request(callback)).location).toBe('/account');

    const again = new BrowserSession(base);
    const next = await upstream.authorize(await startUpstream(again), 'up-alice');
    const tampered = new URL(next);
    tampered.searchParams.set('state', randomToken());
    const keep = again.cookies.get('lk_upstream')!;
    expect((await again.request(tampered.href)).status).toBe(400);
    // That answer used up the sealed request: put it back, as a browser replaying it would.
    again.cookies.set('lk_upstream', keep);
    expect((await again.request(next)).location).toBe('/account');
    expect(await stored()).toBe(before);
  });

  it('a replayed callback is refused, with or without the sealed request it came with', async () => {
    const browser = new BrowserSession(base);
    const callback = await upstream.authorize(await startUpstream(browser), 'up-alice');
    const sealed = browser.cookies.get('lk_upstream')!;
    expect((await browser.request(callback)).location).toBe('/account');
    expect(browser.cookies.has('lk_upstream')).toBe(false);

    const again = await browser.request(callback);
    expect(again.status).toBe(400);
    expect(again.text).toContain('No sign-in with Acme SSO is in progress in this browser');
    await pair.forgetFailures();
    // Even with the cookie kept back, the code is used up at the upstream provider.
    const replayer = new BrowserSession(base);
    replayer.cookies.set('lk_upstream', sealed);
    const replayed = await replayer.request(callback);
    expect(replayed.status).toBe(400);
    expect((await replayer.request('/account')).location).toBe('/login');
    await pair.forgetFailures();
  });

  it('a sign-in cancelled at the upstream provider (error=access_denied) is a 401; a forged error a 400', async () => {
    const before = await stored();
    const browser = new BrowserSession(base);
    const back = await upstream.cancel(await startUpstream(browser));
    expect(new URL(back).searchParams.get('error')).toBe('access_denied');
    const cancelled = await browser.request(back);
    expect(cancelled.status).toBe(401);
    expect(cancelled.text).toContain('The sign-in at Acme SSO was cancelled or refused.');
    await pair.forgetFailures();
    await startUpstream(browser);
    const forged = await browser.request('/login/upstream/callback?error=access_denied&error_description=%3Cscript%3E');
    expect(forged.status).toBe(400);
    expect(forged.text).not.toContain('<script>');
    expect(await stored()).toBe(before);
    await pair.forgetFailures();
  });

  it('callbacks count against their source like one-time tokens: wrong ones pause, then stop it (429 with Retry-After)', async () => {
    const before = await stored();
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let attempt = 0; attempt < 8; attempt++) {
      const answer = await new BrowserSession(base).request('/login/upstream/callback?code=x&state=y');
      statuses.push(answer.status);
      if (answer.status === 429) retryAfter = answer.headers.get('retry-after');
    }
    expect(statuses[0]).toBe(400);
    expect(statuses).toContain(429);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    // Even a right callback is refused while the source is stopped, and it links or creates nothing.
    const refused = await signInUpstream(new BrowserSession(base), 'up-alice');
    expect(refused.status).toBe(429);
    expect(await stored()).toBe(before);
  });
});
