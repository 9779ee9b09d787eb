import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/** The device grant's type (RFC 8628). */
export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** A user code as the provider makes them: 8 letters of the base-20 alphabet, XXXX-XXXX. */
export const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

/**
 * A person types `userCode` on the provider's code-entry page and confirms it. Returns once the confirmation has been
 * submitted (the browser then goes on to the sign-in page, or straight to the end when its session suffices).
 */
export async function enterUserCode(page: Page, base: string, userCode: string, client?: string): Promise<void> {
  await page.goto(`${base}/oidc/device`);
  await page.getByLabel('Code').fill(userCode);
  await page.getByRole('button', { name: 'Continue' }).click();
  await confirmUserCode(page, userCode, client);
}

/** On the confirmation page: the code shown is `userCode` (and the client asking is `client`, when given); Continue. */
export async function confirmUserCode(page: Page, userCode: string, client?: string): Promise<void> {
  await page.getByRole('heading', { name: 'Confirm the code' }).waitFor();
  expect(await page.locator('#user-code').textContent()).toBe(userCode);
  if (client) expect(await page.locator('main').textContent()).toContain(`${client} asks to sign in as you`);
  await page.getByRole('button', { name: 'Continue' }).click();
}

/** The page that ends a device's sign-in in the browser. */
export const deviceSignedIn = (page: Page) => page.getByRole('heading', { name: 'Device signed in' }).waitFor();
