import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { hasChromium } from './support/chromium.js';
import { openAuthenticator, post } from './support/passkey-browser.js';
import {
  type RelyingParty,
  startRelyingParty,
  register,
  signIn,
  signCountOf,
  rowOf,
  passkeysOf,
  challengeRows,
  expectRefused,
  browser,
  useChromium,
} from './support/passkey-relying-party.js';

// The refusals of spec "Passkeys" over HTTP, against the running api and its database, with Chromium's CDP
// virtual authenticator as the authenticator: a replayed challenge, a ceremony run at an origin the relying
// party does not allow, a signature counter that goes backwards, and a credential of another RP ID. Each
// refusal is shown next to its control (the same ceremony with the one thing put right succeeds), so the
// 400 is known to come from the rule under test. Node makes the requests the service's pages would make
// (their cookies, their Origin header); the authenticator signs in a page of the origin each case needs.
//
// Sign-in refusals count against the source address's failure budget (two in a row impose a pause), so
// every refused sign-in below is followed by a successful one before the next refusal.

useChromium();

describe.runIf(hasChromium)('spec Passkeys (challenges are single use): a replayed WebAuthn response is refused over HTTP', () => {
  let rp: RelyingParty;
  let page: Page;
  let credentialId: string;

  beforeAll(async () => {
    rp = await startRelyingParty();
    ({ page } = await openAuthenticator(browser, `${rp.publicBase}/login/ott`));
  });
  afterAll(() => rp?.service.stop());

  it('registration: the same response POSTed twice by the same browser is stored once; the second answer is 400 PASSKEY_CHALLENGE_INVALID', async () => {
    const { registered, credential, session, authorization, options } = await register(rp, page, 'Replay test');
    expect(registered.status).toBe(201);
    expect(registered.json).toMatchObject({ id: credential['id'], label: 'Replay test', rpId: 'localhost' });
    credentialId = credential['id'] as string;
    expect(await challengeRows(rp.service, options['challenge'] as string)).toHaveLength(0);
    const stored = await rowOf(rp.service, credentialId);

    const replayed = await post(
      session,
      `${rp.service.url}/webauthn/register`,
      rp.publicBase,
      { response: credential, label: 'Replayed' },
      { authorization },
    );
    expectRefused(replayed, 'PASSKEY_CHALLENGE_INVALID');
    // Another browser of the same user (its own binding) gets no further with it.
    const elsewhere = new BrowserSession(rp.service.url);
    expect((await post(elsewhere, `${rp.service.url}/webauthn/register/options`, rp.publicBase, {}, { authorization })).status).toBe(200);
    const replayedElsewhere = await post(
      elsewhere,
      `${rp.service.url}/webauthn/register`,
      rp.publicBase,
      { response: credential },
      { authorization },
    );
    expect(replayedElsewhere.status).toBe(400);
    expect(replayedElsewhere.json).toMatchObject({ code: 'PASSKEY_CHALLENGE_INVALID' });

    expect(await passkeysOf(rp.service, rp.alice)).toEqual([{ id: credentialId }]);
    expect(await rowOf(rp.service, credentialId)).toEqual(stored);
  });

  it('sign-in: an assertion that signed in, POSTed again by the same browser, is 400 PASSKEY_CHALLENGE_INVALID: no session, counter and last use unchanged', async () => {
    expect(credentialId).toBeDefined();
    const { session, options, assertion, answer } = await signIn(rp, page);
    expect(assertion['id']).toBe(credentialId);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ status: 'signed-in', continue: '/account' });
    expect(await challengeRows(rp.service, options['challenge'] as string)).toHaveLength(0);
    const used = await rowOf(rp.service, credentialId);
    expect(used!.counter).toBe(signCountOf(assertion));
    expect(used!.lastUsedAt).not.toBeNull();

    // Same browser, same lk_webauthn binding, the very same signed assertion.
    expect(session.cookies.has('lk_webauthn')).toBe(true);
    const replayed = await post(session, `${rp.service.url}/login/webauthn`, rp.publicBase, { response: assertion });
    expectRefused(replayed, 'PASSKEY_CHALLENGE_INVALID');
    // Whoever captured it, in a browser of their own, fares no better.
    const thief = new BrowserSession(rp.service.url);
    expect((await post(thief, `${rp.service.url}/webauthn/authenticate/options`, rp.publicBase, {})).status).toBe(200);
    expectRefused(
      await post(thief, `${rp.service.url}/login/webauthn`, rp.publicBase, { response: assertion }),
      'PASSKEY_CHALLENGE_INVALID',
    );

    expect(await rowOf(rp.service, credentialId)).toEqual(used);
    expect(await passkeysOf(rp.service, rp.alice)).toEqual([{ id: credentialId }]);
  });
});
