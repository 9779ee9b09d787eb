import { existsSync } from 'node:fs';
import { needsTool } from '@latchkey/db/testing';
import { CHROMIUM } from '@latchkey/auth/testing';
export { launchChromium } from '@latchkey/auth/testing';
export const hasChromium = needsTool('chromium', existsSync(CHROMIUM), 'the browser tests (passkeys, the demo, GraphiQL; apt-get install chromium)');
/**
 * A platform authenticator for a page (CDP virtual authenticator: CTAP2, internal transport, resident keys,
 * user verification that succeeds), as a laptop's built-in passkey provider behaves.
 */
export async function addPlatformAuthenticator(context, page) {
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
            protocol: 'ctap2',
            transport: 'internal',
            hasResidentKey: true,
            hasUserVerification: true,
            isUserVerified: true,
            automaticPresenceSimulation: true,
        },
    });
    return { cdp, authenticatorId };
}
/** The demo client's sign-in as far as the e-mail link: returns once the link's page has been submitted. */
export async function demoSignInByLink(page, base, outbox, email) {
    await page.goto(`${base}/`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/interaction\//);
    await page.getByLabel('E-mail address').fill(email);
    const before = outbox.count();
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
    await page.waitForURL(/\/login\/ott\?sent=1/);
    await page.goto((await outbox.next(before, email)).magicLink);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}
//# sourceMappingURL=chromium.js.map