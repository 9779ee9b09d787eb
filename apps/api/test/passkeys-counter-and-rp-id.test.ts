import { rmSync } from 'node:fs';
import { eq, passkeys, seedDemoData } from '@latchkey/db';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/browser-session.js';
import { hasChromium } from './support/chromium.js';
import { demoOf } from './support/demo.js';
import { clientDataOf, type Json, openAuthenticator } from './support/passkey-browser.js';
import {
  browser,
  expectRefused,
  register,
  type RelyingParty,
  rowOf,
  rpIdHashOf,
  sha256,
  signCountOf,
  signIn,
  startRelyingParty,
  useChromium,
} from './support/passkey-relying-party.js';
import { createOwnDatabase, databaseKind, serviceDataDir, startTestService } from './support/service.js';

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
  'spec Passkeys (signature counter): an assertion whose counter does not exceed the stored one is refused over HTTP',
  () => {
    let rp: RelyingParty;
    let page: Page;
    let authenticator: { cdp: Awaited<ReturnType<typeof openAuthenticator>>['cdp']; authenticatorId: string };
    let credentialId: string;
    const setCounter = (counter: number) => rp.service.database.db.update(passkeys).set({ counter }).where(eq(passkeys.id, credentialId));
    /** What the virtual authenticator holds for the credential (its own signature counter). */
    const held = async () =>
      (await authenticator.cdp.send('WebAuthn.getCredentials', { authenticatorId: authenticator.authenticatorId })).credentials;

    beforeAll(async () => {
      rp = await startRelyingParty();
      const opened = await openAuthenticator(browser, `${rp.publicBase}/login/ott`);
      page = opened.page;
      authenticator = opened;
      const { registered, credential } = await register(rp, page, 'Counter test');
      expect(registered.status).toBe(201);
      credentialId = credential['id'] as string;
    });
    afterAll(() => rp?.service.stop());

    it('the virtual authenticator counts: 1 at registration, one more per assertion, and the service stores what it sends', async () => {
      expect((await held()).map((credential) => credential.signCount)).toEqual([1]);
      expect((await rowOf(rp.service, credentialId))!.counter).toBe(1);
      const { assertion, answer } = await signIn(rp, page);
      expect(answer.status).toBe(200);
      expect(signCountOf(assertion)).toBe(2);
      expect((await rowOf(rp.service, credentialId))!.counter).toBe(2);
    });

    it('stored counter raised to 1000000: the next sign-in is 400 PASSKEY_COUNTER_REGRESSION, no session, the row untouched; a stored counter equal to the one sent is refused too', async () => {
      await setCounter(1_000_000);
      const before = await rowOf(rp.service, credentialId);
      const { assertion, answer } = await signIn(rp, page);
      expect(assertion['id']).toBe(credentialId);
      expect(signCountOf(assertion)).toBe(3); // non-zero, so the counter rule applies
      expectRefused(answer, 'PASSKEY_COUNTER_REGRESSION');
      expect(await rowOf(rp.service, credentialId)).toEqual(before);

      // Control: with the stored counter back at what the authenticator last sent, the same authenticator signs in.
      await setCounter(3);
      const control = await signIn(rp, page);
      expect(control.answer.status).toBe(200);
      expect((await rowOf(rp.service, credentialId))!.counter).toBe(4);

      // The rule is "greater than", not "at least": equal to the next value sent is refused as well.
      await setCounter(5);
      const equal = await signIn(rp, page);
      expect(signCountOf(equal.assertion)).toBe(5);
      expectRefused(equal.answer, 'PASSKEY_COUNTER_REGRESSION');
      expect((await rowOf(rp.service, credentialId))!.counter).toBe(5);
      const next = await signIn(rp, page);
      expect(signCountOf(next.assertion)).toBe(6);
      expect(next.answer.status).toBe(200);
      expect((await rowOf(rp.service, credentialId))!.counter).toBe(6);
    });

    it('a cloned authenticator (the key copied, the counter left behind) is refused once the genuine one has moved on; the genuine one keeps signing in', async () => {
      const [original] = await held();
      expect(original).toMatchObject({ rpId: 'localhost', isResidentCredential: true });
      // The copy: another browser with its own virtual authenticator, holding the same private key and counter.
      const copy = await openAuthenticator(browser, `${rp.publicBase}/login/ott`);
      await copy.cdp.send('WebAuthn.addCredential', { authenticatorId: copy.authenticatorId, credential: original! });

      const genuine = await signIn(rp, page);
      expect(genuine.answer.status).toBe(200);
      const stored = await rowOf(rp.service, credentialId);
      expect(stored!.counter).toBe(original!.signCount + 1);

      const cloned = await signIn(rp, copy.page);
      expect(cloned.assertion['id']).toBe(credentialId);
      expect(signCountOf(cloned.assertion)).toBe(original!.signCount + 1);
      expectRefused(cloned.answer, 'PASSKEY_COUNTER_REGRESSION');
      expect(await rowOf(rp.service, credentialId)).toEqual(stored);

      const again = await signIn(rp, page);
      expect(again.answer.status).toBe(200);
      expect((await rowOf(rp.service, credentialId))!.counter).toBe(original!.signCount + 2);
    });
  },
);

describe.runIf(hasChromium)(
  'spec Passkeys 4 (RP ID): a credential registered for one RP ID is refused by a relying party with another',
  () => {
    // Relying party A has RP ID app.localhost, B has login.app.localhost; both on one database (two instances on
    // PostgreSQL; on PGlite one at a time over the same DATA_DIR). Chromium treats *.localhost as loopback and
    // as a secure context. A page of B may claim its parent app.localhost as the RP ID (a registrable suffix),
    // so the authenticator will sign A's credential for B's challenge at B's allowed origin: RP ID is then the
    // only thing wrong, and only the server's checks stand in the way. ('localhost' itself cannot be claimed
    // from app.localhost: Chromium treats it as a registry, not a registrable domain.)
    const names = ['A', 'B'] as const;
    type Name = (typeof names)[number];
    const running: Partial<Record<Name, RelyingParty>> = {};
    const env: Record<Name, Record<string, string | undefined>> = { A: {}, B: {} };
    const origin: Record<Name, string> = { A: '', B: '' };
    let dataDir: string;
    let dropDatabase: () => Promise<void> = async () => undefined;
    let seeded = false;

    beforeAll(async () => {
      dataDir = serviceDataDir('passkey-rpid');
      let databaseUrl: string | undefined;
      if (databaseKind === 'postgres') {
        const own = await createOwnDatabase(process.env['DATABASE_URL']!);
        databaseUrl = own.url;
        dropDatabase = own.drop;
      }
      for (const [name, host] of [
        ['A', 'app.localhost'],
        ['B', 'login.app.localhost'],
      ] as const) {
        const port = await freePort();
        origin[name] = `http://${host}:${port}`;
        env[name] = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, PORT: String(port), PUBLIC_URL: origin[name], RP_ID: host };
      }
    });
    afterAll(async () => {
      for (const name of names) await running[name]?.service.stop();
      await dropDatabase();
      rmSync(dataDir, { recursive: true, force: true });
    });

    /** Relying party `name`, started if need be (on PGlite the other one is stopped first: one process per data directory). */
    async function at(name: Name): Promise<RelyingParty> {
      const up = running[name];
      if (up) return up;
      if (databaseKind === 'pglite') {
        for (const other of names) {
          await running[other]?.service.stop();
          delete running[other];
        }
      }
      const service = await startTestService(env[name]);
      if (!seeded) {
        await seedDemoData(service.database);
        seeded = true;
      }
      const rp = { service, publicBase: origin[name], alice: (await demoOf(service)).userId.alice };
      running[name] = rp;
      return rp;
    }

    it("A's passkey, signed for B's challenge at B's origin, is 400 PASSKEY_UNKNOWN_CREDENTIAL at B; with its row relabelled to B's RP ID, 400 PASSKEY_VERIFICATION_FAILED (RP ID hash); it still signs in at A", async () => {
      // At A: alice registers a passkey (RP ID app.localhost), and it signs in there.
      let a = await at('A');
      expect(a.service.config.auth.relyingParty).toEqual({ id: 'app.localhost', name: 'Latchkey', origins: [origin.A] });
      const { page } = await openAuthenticator(browser, `${origin.A}/login/ott`);
      const fromA = await register(a, page, 'Registered at A');
      expect(fromA.registered.status).toBe(201);
      expect(fromA.registered.json).toMatchObject({ rpId: 'app.localhost' });
      const credentialId = fromA.credential['id'] as string;
      expect((await signIn(a, page)).answer.status).toBe(200);

      // At B: B's options and binding, the ceremony on B's page, only the RP ID is A's.
      const b = await at('B');
      expect(b.service.config.auth.relyingParty).toEqual({ id: 'login.app.localhost', name: 'Latchkey', origins: [origin.B] });
      expect((await page.goto(`${origin.B}/login/ott`))?.status()).toBe(200);
      const claimA = (options: Json) => {
        expect(options['rpId']).toBe('login.app.localhost');
        return { ...options, rpId: 'app.localhost' };
      };
      const before = await rowOf(b.service, credentialId);
      const foreign = await signIn(b, page, claimA);
      expect(foreign.assertion['id']).toBe(credentialId);
      expect(clientDataOf(foreign.assertion)).toMatchObject({
        type: 'webauthn.get',
        origin: origin.B,
        challenge: foreign.options['challenge'],
      });
      expect(rpIdHashOf(foreign.assertion)).toBe(sha256('app.localhost'));
      expectRefused(foreign.answer, 'PASSKEY_UNKNOWN_CREDENTIAL');
      expect(await rowOf(b.service, credentialId)).toEqual(before);

      // Control at B: a passkey registered at B (RP ID login.app.localhost) signs in at B through the same steps.
      const fromB = await register(b, page, 'Registered at B');
      expect(fromB.registered.status).toBe(201);
      expect(fromB.registered.json).toMatchObject({ rpId: 'login.app.localhost' });
      const own = await signIn(b, page);
      expect(own.assertion['id']).toBe(fromB.credential['id']);
      expect(rpIdHashOf(own.assertion)).toBe(sha256('login.app.localhost'));
      expect(own.answer.status).toBe(200);

      // A's row carried over to B's RP ID (as a copy or migration would): the signed RP ID hash still refuses it.
      await b.service.database.db.update(passkeys).set({ rpId: 'login.app.localhost' }).where(eq(passkeys.id, credentialId));
      const relabelled = await signIn(b, page, claimA);
      expect(relabelled.assertion['id']).toBe(credentialId);
      expect(rpIdHashOf(relabelled.assertion)).toBe(sha256('app.localhost'));
      expectRefused(relabelled.answer, 'PASSKEY_VERIFICATION_FAILED');
      expect(await rowOf(b.service, credentialId)).toEqual({ ...before, rpId: 'login.app.localhost' });
      await b.service.database.db.update(passkeys).set({ rpId: 'app.localhost' }).where(eq(passkeys.id, credentialId));

      // Back at A, where it was registered: it signs in.
      a = await at('A');
      await page.goto(`${origin.A}/login/ott`);
      const home = await signIn(a, page);
      expect(home.assertion['id']).toBe(credentialId);
      expect(home.answer.status).toBe(200);
      expect(home.answer.json).toEqual({ status: 'signed-in', continue: '/account' });
      expect((await rowOf(a.service, credentialId))!.counter).toBe(signCountOf(home.assertion));
    }, 120_000);
  },
);
