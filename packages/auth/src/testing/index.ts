// Helpers for the tests of packages that use the authorization server (`@latchkey/auth/testing`); never
// imported by production code.
export { startUpstreamProvider } from './upstream-provider.js';
export type { UpstreamAccount, UpstreamProvider } from './upstream-provider.js';
export { CHROMIUM, launchChromium } from './chromium.js';
