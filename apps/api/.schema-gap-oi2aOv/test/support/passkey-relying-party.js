import { createHash } from 'node:crypto';
import { PASSKEY_ERRORS } from '@latchkey/auth';
import { eq, passkeys, seedDemoData, webauthnChallenges } from '@latchkey/db';
import { afterAll, beforeAll, expect } from 'vitest';
import { BrowserSession, freePort } from './browser-session.js';
import { hasChromium, launchChromium } from './chromium.js';
import { demoOf } from './demo.js';
import { create, get, post } from './passkey-browser.js';
import { startTestService } from './service.js';
export async function startRelyingParty(env = () => ({})) {
    const port = await freePort();
    const publicBase = `http://localhost:${port}`;
    const service = await startTestService({ PORT: String(port), PUBLIC_URL: publicBase, ...env(publicBase) });
    await seedDemoData(service.database);
    return { service, publicBase, alice: (await demoOf(service)).userId.alice };
}
/** alice, signed in (access token), registers the passkey the page's authenticator creates; the 201 and the credential. */
export async function register(rp, page, label) {
    const session = new BrowserSession(rp.service.url);
    const authorization = `Bearer ${await rp.service.token(rp.alice)}`;
    const options = await post(session, `${rp.service.url}/webauthn/register/options`, rp.publicBase, {}, { authorization });
    expect(options.status).toBe(200);
    const credential = await create(page, options.json);
    const registered = await post(session, `${rp.service.url}/webauthn/register`, rp.publicBase, { response: credential, label }, { authorization });
    return { registered, credential, session, authorization, options: options.json };
}
/** A passkey sign-in in a fresh browser session: request options, the authenticator's assertion, POST /login/webauthn. */
export async function signIn(rp, page, adjust = (options) => options) {
    const session = new BrowserSession(rp.service.url);
    const options = await post(session, `${rp.service.url}/webauthn/authenticate/options`, rp.publicBase, {});
    expect(options.status).toBe(200);
    const assertion = await get(page, adjust(options.json));
    const answer = await post(session, `${rp.service.url}/login/webauthn`, rp.publicBase, { response: assertion });
    return { session, options: options.json, assertion, answer };
}
/** The signature counter the authenticator put into an assertion's authenticator data (bytes 33-36). */
export const signCountOf = (assertion) => Buffer.from(assertion['response']['authenticatorData'], 'base64url').readUInt32BE(33);
/** The RP ID hash the authenticator signed (the first 32 bytes of the authenticator data). */
export const rpIdHashOf = (assertion) => Buffer.from(assertion['response']['authenticatorData'], 'base64url')
    .subarray(0, 32)
    .toString('hex');
export const sha256 = (text) => createHash('sha256').update(text).digest('hex');
/** The stored row of a passkey (what a refusal must leave untouched). */
export async function rowOf(service, id) {
    const [row] = await service.database.db
        .select({ counter: passkeys.counter, lastUsedAt: passkeys.lastUsedAt, rpId: passkeys.rpId, userId: passkeys.userId })
        .from(passkeys)
        .where(eq(passkeys.id, id));
    return row;
}
export const passkeysOf = (service, userId) => service.database.db.select({ id: passkeys.id }).from(passkeys).where(eq(passkeys.userId, userId));
export const challengeRows = (service, challenge) => service.database.db.select({ id: webauthnChallenges.id }).from(webauthnChallenges).where(eq(webauthnChallenges.challenge, challenge));
/** A refusal as the endpoints send it: 400, the code, the code's fixed message, and no cookie of any kind (no sign-in, no continuation). */
export function expectRefused(answer, code) {
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ statusCode: 400, error: 'Bad Request', message: PASSKEY_ERRORS[code], code });
    expect(answer.headers.getSetCookie()).toEqual([]);
}
// Live binding: assigned by useChromium's beforeAll, read by the tests of the file that called it.
export let browser;
/** Launches Chromium for this file's tests (where it is installed) and closes it after them. */
export function useChromium() {
    beforeAll(async () => {
        if (hasChromium)
            browser = await launchChromium();
    });
    afterAll(async () => {
        await browser?.close();
    });
}
//# sourceMappingURL=passkey-relying-party.js.map