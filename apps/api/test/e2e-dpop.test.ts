import { calculateJwkThumbprint, decodeJwt } from 'jose';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { demoSignInByLink, graphqlFromDemoPage, hasChromium, useChromiumService } from './support/chromium.js';
import { COST_REPORTED } from './support/cost.js';
import { outboxOf } from './support/outbox.js';

/** The demo's key pair as IndexedDB keeps it: its public JWK, and whether script can export the private key. */
function storedKey(
  page: Page,
): Promise<{ jwk: { kty: string; crv: string; x: string; y: string }; privateExtractable: boolean; exportRefused: boolean }> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const opening = indexedDB.open('latchkey-dpop', 1);
      opening.onsuccess = () => resolve(opening.result);
      opening.onerror = () => reject(opening.error);
    });
    const pair = await new Promise<CryptoKeyPair>((resolve, reject) => {
      const read = db.transaction('keys').objectStore('keys').get('latchkey-demo');
      read.onsuccess = () => resolve(read.result as CryptoKeyPair);
      read.onerror = () => reject(read.error);
    });
    db.close();
    const { kty, crv, x, y } = (await crypto.subtle.exportKey('jwk', pair.publicKey)) as { kty: string; crv: string; x: string; y: string };
    const exportRefused = await crypto.subtle.exportKey('jwk', pair.privateKey).then(
      () => false,
      () => true,
    );
    return { jwk: { kty, crv, x, y }, privateExtractable: pair.privateKey.extractable, exportRefused };
  });
}

describe.runIf(hasChromium)('end to end in Chromium: the demo binds its tokens with DPoP', () => {
  const started = useChromiumService({ NODE_ENV: 'development' });

  it('the token is bound to a non-extractable key kept in IndexedDB; the page calls the API with proofs, and after a reload with the same key', async () => {
    const page = await (await started.browser.newContext()).newPage();
    await demoSignInByLink(page, started.base, outboxOf(started.service.config.dataDir), 'alice@acme.test');
    await page.waitForURL(`${started.base}/`);
    await expect.poll(() => page.locator('#documents li').count(), { timeout: 10_000 }).toBeGreaterThan(0);

    const tokens = JSON.parse((await page.evaluate(() => sessionStorage.getItem('demo.tokens')))!) as {
      access_token: string;
      token_type: string;
    };
    expect(tokens.token_type).toBe('DPoP');
    const key = await storedKey(page);
    expect(key.privateExtractable).toBe(false);
    expect(key.exportRefused).toBe(true);
    expect(decodeJwt(tokens.access_token)['cnf']).toEqual({ jkt: await calculateJwkThumbprint(key.jwk) });

    await page.reload();
    await expect.poll(() => page.locator('#documents li').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await page.locator('#documents-error').textContent()).toBe('');
    expect((await storedKey(page)).jwk).toEqual(key.jwk);
    expect((await graphqlFromDemoPage(page, '{ me { email } }')).json).toEqual({
      data: { me: { email: 'alice@acme.test' } },
      extensions: COST_REPORTED,
    });
  });
});
