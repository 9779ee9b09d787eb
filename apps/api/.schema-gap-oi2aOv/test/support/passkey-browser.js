import { expect } from 'vitest';
import { addPlatformAuthenticator } from './chromium.js';
/** A JSON POST of the service's own pages to the instance at `url`: the browser's cookies, Origin = the public origin. */
export async function post(session, url, publicOrigin, body, headers = {}) {
    const response = await session.request(url, { json: body, headers: { origin: publicOrigin, accept: 'application/json', ...headers } });
    let json;
    try {
        json = JSON.parse(response.text);
    }
    catch {
        json = undefined;
    }
    return { ...response, json };
}
/** Chromium with a platform authenticator (a browser context of its own), on a page at `pageUrl`. */
export async function openAuthenticator(browser, pageUrl) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const { cdp, authenticatorId } = await addPlatformAuthenticator(context, page);
    const landing = await page.goto(pageUrl);
    expect(landing?.status()).toBe(200);
    return { page, cdp, authenticatorId };
}
/** navigator.credentials.create() in the page with creation options some instance served. */
export const create = (page, options) => page.evaluate(async (json) => {
    const credential = (await navigator.credentials.create({
        publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(json),
    }));
    return credential.toJSON();
}, options);
/** navigator.credentials.get() in the page with request options some instance served. */
export const get = (page, options) => page.evaluate(async (json) => {
    const credential = (await navigator.credentials.get({
        publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(json),
    }));
    return credential.toJSON();
}, options);
/** What the browser signed into a WebAuthn response's clientDataJSON (challenge, origin, type). */
export const clientDataOf = (response) => JSON.parse(Buffer.from(response['response']['clientDataJSON'], 'base64url').toString('utf8'));
/** The challenge a WebAuthn response answers, as the browser signed it into clientDataJSON. */
export const challengeOf = (response) => clientDataOf(response).challenge;
//# sourceMappingURL=passkey-browser.js.map