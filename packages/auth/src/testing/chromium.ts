import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (never a downloaded browser); CI installs it when missing. */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless Chromium with the flags every browser test here uses (no sandbox, GPU, QUIC or background traffic). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
