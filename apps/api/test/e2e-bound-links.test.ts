import { describe, expect, it } from 'vitest';
import { hasChromium, useChromiumService } from './support/chromium.js';
import { codeOf, outboxOf } from './support/outbox.js';

describe.runIf(hasChromium)('end to end in Chromium: BIND_LINKS_TO_BROWSER=true', () => {
  const started = useChromiumService({ NODE_ENV: 'development', BIND_LINKS_TO_BROWSER: 'true' });

  it("the link opened on another device signs nothing in and says to type the code; the code typed in the browser that asked completes the application's sign-in", async () => {
    const outbox = outboxOf(started.service.config.dataDir);
    const laptop = await (await started.browser.newContext()).newPage();
    await laptop.goto(`${started.base}/`);
    await laptop.getByRole('button', { name: 'Sign in' }).click();
    await laptop.waitForURL(/\/interaction\//);
    await laptop.getByLabel('E-mail address').fill('alice@acme.test');
    const before = outbox.count();
    await laptop.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
    await laptop.waitForURL(/\/login\/ott\?sent=1/);
    const message = await outbox.next(before, 'alice@acme.test');

    // The phone (another browser) opens the link from the message.
    const phone = await (await started.browser.newContext()).newPage();
    await phone.goto(message.magicLink);
    expect(await phone.locator('main').textContent()).toContain('work only in this browser');
    await phone.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => phone.getByRole('alert').textContent()).toContain('Type the 6-digit code from the message in that browser');
    expect((await phone.context().cookies()).some((cookie) => cookie.name === '_session')).toBe(false);

    // Back on the laptop, the code from the same message finishes the sign-in the demo application asked for.
    await laptop.getByLabel(/6-digit code/).fill(codeOf(message));
    await laptop.getByRole('button', { name: 'Sign in', exact: true }).click();
    await laptop.waitForURL(`${started.base}/`);
    await expect.poll(() => laptop.locator('#claims').textContent(), { timeout: 10_000 }).toContain('"otp"');
  });
});
