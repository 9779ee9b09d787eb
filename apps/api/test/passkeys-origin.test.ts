import { startTcpProxy } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium } from './support/chromium.js';
import { clientDataOf, openAuthenticator } from './support/passkey-browser.js';
import {
  type RelyingParty,
  startRelyingParty,
  register,
  signIn,
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

describe.runIf(hasChromium)(
  'spec Passkeys 2 (allowed origins): a ceremony run at an origin the relying party does not allow is refused over HTTP',
  () => {
    let rp: RelyingParty;
    let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
    /** The same service's pages at another origin (a reverse proxy on another port): a look-alike site relaying the ceremony. */
    let lookAlike: string;

    beforeAll(async () => {
      rp = await startRelyingParty((publicBase) => ({ WEBAUTHN_ORIGINS: publicBase }));
      expect(rp.service.config.auth.relyingParty).toEqual({ id: 'localhost', name: 'Latchkey', origins: [rp.publicBase] });
      proxy = await startTcpProxy('127.0.0.1', Number(new URL(rp.service.url).port));
      lookAlike = `http://localhost:${proxy.port}`;
    });
    afterAll(async () => {
      await proxy?.close();
      await rp?.service.stop();
    });

    it('registration signed at the look-alike origin (RP ID localhost all the same) is 400 PASSKEY_VERIFICATION_FAILED and stores nothing; at the allowed origin the same authenticator registers', async () => {
      const { page } = await openAuthenticator(browser, `${lookAlike}/login/ott`);
      const refused = await register(rp, page, 'From the look-alike');
      expect(clientDataOf(refused.credential)).toMatchObject({
        type: 'webauthn.create',
        origin: lookAlike,
        challenge: refused.options['challenge'],
      });
      expectRefused(refused.registered, 'PASSKEY_VERIFICATION_FAILED');
      expect(await passkeysOf(rp.service, rp.alice)).toEqual([]);
      expect(await challengeRows(rp.service, refused.options['challenge'] as string)).toHaveLength(0); // spent all the same

      await page.goto(`${rp.publicBase}/login/ott`);
      const accepted = await register(rp, page, 'From the real site');
      expect(clientDataOf(accepted.credential).origin).toBe(rp.publicBase);
      expect(accepted.registered.status).toBe(201);
      expect(await passkeysOf(rp.service, rp.alice)).toEqual([{ id: accepted.credential['id'] }]);
    });

    it('sign-in signed at the look-alike origin is 400 PASSKEY_VERIFICATION_FAILED: no session, counter and last use unchanged; at the allowed origin it signs in', async () => {
      // A fresh authenticator, so that it holds exactly one credential for RP ID localhost.
      const { page } = await openAuthenticator(browser, `${rp.publicBase}/login/ott`);
      const { registered, credential } = await register(rp, page, 'Signs in at the real site only');
      expect(registered.status).toBe(201);
      const before = await rowOf(rp.service, credential['id'] as string);

      await page.goto(`${lookAlike}/login/ott`);
      const relayed = await signIn(rp, page);
      expect(relayed.assertion['id']).toBe(credential['id']);
      expect(clientDataOf(relayed.assertion)).toMatchObject({
        type: 'webauthn.get',
        origin: lookAlike,
        challenge: relayed.options['challenge'],
      });
      expectRefused(relayed.answer, 'PASSKEY_VERIFICATION_FAILED');
      expect(await rowOf(rp.service, credential['id'] as string)).toEqual(before);

      await page.goto(`${rp.publicBase}/login/ott`);
      const genuine = await signIn(rp, page);
      expect(clientDataOf(genuine.assertion).origin).toBe(rp.publicBase);
      expect(genuine.answer.status).toBe(200);
      expect(genuine.answer.json).toEqual({ status: 'signed-in', continue: '/account' });
    });
  },
);
