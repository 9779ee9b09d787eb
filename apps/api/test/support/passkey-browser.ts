import type { Browser, CDPSession, Page } from 'playwright-core';
import { expect } from 'vitest';
import type { BrowserSession } from './browser-session.js';
import { addPlatformAuthenticator } from './chromium.js';

// Real WebAuthn ceremonies over HTTP: Node makes the requests a page of the service would make (its cookies,
// its Origin header) and Chromium, on a page at some origin, is the authenticator (CDP virtual authenticator,
// CTAP2, platform, user verification).

export type Json = Record<string, any>;

/** A JSON POST of the service's own pages to the instance at `url`: the browser's cookies, Origin = the public origin. */
export async function post(
  session: BrowserSession,
  url: string,
  publicOrigin: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const response = await session.request(url, { json: body, headers: { origin: publicOrigin, accept: 'application/json', ...headers } });
  let json: Json | undefined;
  try {
    json = JSON.parse(response.text) as Json;
  } catch {
    json = undefined;
  }
  return { ...response, json };
}

/** Chromium with a platform authenticator (a browser context of its own), on a page at `pageUrl`. */
export async function openAuthenticator(
  browser: Browser,
  pageUrl: string,
): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const { cdp, authenticatorId } = await addPlatformAuthenticator(context, page);
  const landing = await page.goto(pageUrl);
  expect(landing?.status()).toBe(200);
  return { page, cdp, authenticatorId };
}

/** navigator.credentials.create() in the page with creation options some instance served. */
export const create = (page: Page, options: Json): Promise<Json> =>
  page.evaluate(async (json) => {
    const credential = (await navigator.credentials.create({
      publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(json as never),
    })) as PublicKeyCredential;
    return credential.toJSON() as Record<string, unknown>;
  }, options);

/** navigator.credentials.get() in the page with request options some instance served. */
export const get = (page: Page, options: Json): Promise<Json> =>
  page.evaluate(async (json) => {
    const credential = (await navigator.credentials.get({
      publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(json as never),
    })) as PublicKeyCredential;
    return credential.toJSON() as Record<string, unknown>;
  }, options);

/** What the browser signed into a WebAuthn response's clientDataJSON (challenge, origin, type). */
export const clientDataOf = (response: Json) =>
  JSON.parse(Buffer.from(response['response']['clientDataJSON'] as string, 'base64url').toString('utf8')) as {
    type: string;
    challenge: string;
    origin: string;
  };

/** The challenge a WebAuthn response answers, as the browser signed it into clientDataJSON. */
export const challengeOf = (response: Json) => clientDataOf(response).challenge;
