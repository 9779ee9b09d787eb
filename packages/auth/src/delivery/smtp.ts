import { createTransport } from 'nodemailer';
import { renderMessage } from './message.js';
import type { DeliveryHandler } from './types.js';

export interface SmtpDeliveryOptions {
  /** `smtp://user:pass@host:587` or `smtps://...` (nodemailer connection URL) */
  url: string;
  /** the From address, e.g. `Latchkey <login@example.com>` */
  from: string;
  /** @default 10000 */
  timeoutMs?: number;
}

/** Sends the sign-in link by e-mail through an SMTP server (nodemailer). The token travels only in the mail. */
export function createSmtpDelivery(options: SmtpDeliveryOptions): DeliveryHandler & { close(): void } {
  const timeout = options.timeoutMs ?? 10_000;
  let transport: ReturnType<typeof createTransport>;
  try {
    const url = new URL(options.url);
    if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new TypeError('not smtp');
    transport = createTransport({
      host: url.hostname,
      port: url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587,
      secure: url.protocol === 'smtps:',
      auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
    });
  } catch {
    // The URL may hold a password: never echo it.
    throw new Error('SMTP_URL is not a valid smtp:// or smtps:// URL (value not shown)');
  }
  return {
    name: 'smtp',
    async deliver(message) {
      const { subject, text } = renderMessage(message);
      await transport.sendMail({ from: options.from, to: message.to, subject, text });
    },
    close: () => transport.close(),
  };
}
