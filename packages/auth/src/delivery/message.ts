import type { OneTimeTokenMessage } from './types.js';

/** The text of a sign-in message, the same whichever way it travels. */
export function renderMessage(message: OneTimeTokenMessage): { subject: string; text: string } {
  const minutes = Math.max(1, Math.round((message.expiresAt.getTime() - Date.now()) / 60_000));
  return {
    subject: 'Your Latchkey sign-in link',
    text:
      `Sign in to Latchkey by opening this link within ${minutes} minute(s):\n\n${message.magicLink}\n\n` +
      (message.code ? `Or type this code in the browser where you asked for it: ${message.code}\n\n` : '') +
      `${message.code ? 'Either works once, and using one uses up the other' : 'It works once'}. If you did not ask to sign in, ignore this message.`,
  };
}
