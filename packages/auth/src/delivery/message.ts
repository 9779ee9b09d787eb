import type { OneTimeTokenMessage } from './types.js';

/** The text of a sign-in message, the same whichever way it travels. */
export function renderMessage(message: OneTimeTokenMessage): { subject: string; text: string } {
  const minutes = Math.max(1, Math.round((message.expiresAt.getTime() - Date.now()) / 60_000));
  return {
    subject: 'Your Latchkey sign-in link',
    text: `Sign in to Latchkey by opening this link within ${minutes} minute(s):\n\n${message.magicLink}\n\nIt works once. If you did not ask to sign in, ignore this message.`,
  };
}
