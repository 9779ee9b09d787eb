import { outboxOf, tokenOf } from './outbox.js';
/**
 * The e-mailed-link sign-in as a person does it on the provider's own page: open /login, ask for a link for `email`,
 * then submit the token of the message that arrives (the development outbox of `dataDir`). Returns the answer to
 * that submission: its location says what comes next (/account, or /login/factors when a rule wants more).
 */
export async function proveLink(browser, dataDir, email) {
    const outbox = outboxOf(dataDir);
    await browser.request('/login');
    const before = outbox.count();
    await browser.request('/ott/generate', { form: { username: email } });
    return browser.request('/login/ott', { form: { token: tokenOf(await outbox.next(before, email)) } });
}
//# sourceMappingURL=link-sign-in.js.map