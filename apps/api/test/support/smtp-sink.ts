import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { expect } from 'vitest';

/** One mail as the sink received it: envelope recipients and the raw message. */
export interface ReceivedMail {
  to: string[];
  raw: string;
}

/** Quoted-printable soft breaks and escapes undone, enough to find a link in a text body. */
export const decodedMail = (raw: string) =>
  raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/** Real mail for tests: an SMTP server on loopback that keeps what the service sends through SMTP_URL. */
export async function startSmtpSink() {
  const inbox: ReceivedMail[] = [];
  const sink = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      stream.on('end', () => {
        inbox.push({ to: session.envelope.rcptTo.map((rcpt) => rcpt.address), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const port = (sink.server.address() as AddressInfo).port;
  return {
    inbox,
    url: `smtp://127.0.0.1:${port}`,
    /** the magic link of the newest mail once more than `after` mails arrived */
    async nextLink(after: number): Promise<string> {
      await expect.poll(() => inbox.length, { timeout: 30_000, interval: 50 }).toBeGreaterThan(after);
      const link = /https?:\/\/[^\s"<>]+\/login\/ott\?token=[A-Za-z0-9_%-]+/.exec(decodedMail(inbox.at(-1)!.raw))?.[0];
      if (!link) throw new Error('the newest mail holds no sign-in link');
      return link;
    },
    close: () => new Promise<void>((resolve) => sink.close(() => resolve())),
  };
}
