import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSmtpDelivery } from '../index.js';

// A real SMTP server on loopback that keeps what it receives.
const received: { from: string; to: string[]; raw: string; user?: string }[] = [];
let server: SMTPServer;
let port: number;

beforeAll(async () => {
  server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    onAuth(auth, _session, callback) {
      if (auth.username === 'mailer' && auth.password === 's3cret') return callback(null, { user: auth.username });
      return callback(new Error('invalid credentials'));
    },
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw,
          user: typeof session.user === 'string' ? session.user : undefined,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The decoded text of a quoted-printable body (enough for our plain-text message). */
const decoded = (raw: string) =>
  raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));

describe('SMTP delivery (nodemailer)', () => {
  it('sends the sign-in link to the user through a real SMTP server, with credentials from the URL', async () => {
    const delivery = createSmtpDelivery({ url: `smtp://mailer:s3cret@127.0.0.1:${port}`, from: 'Latchkey <login@latchkey.test>' });
    const magicLink = 'http://localhost:4000/login/ott?token=abcDEF_123-xyz';
    await delivery.deliver({ to: 'alice@acme.test', token: 'abcDEF_123-xyz', magicLink, expiresAt: new Date(Date.now() + 300_000) }, {});
    delivery.close();
    expect(received).toHaveLength(1);
    const [mail] = received;
    expect(mail).toMatchObject({ from: 'login@latchkey.test', to: ['alice@acme.test'], user: 'mailer' });
    expect(mail!.raw).toMatch(/^Subject: Your Latchkey sign-in link$/m);
    expect(decoded(mail!.raw)).toContain(magicLink);
  });

  it('a server that refuses the credentials makes delivery fail (the caller logs it; the client never learns)', async () => {
    const delivery = createSmtpDelivery({ url: `smtp://mailer:wrong@127.0.0.1:${port}`, from: 'login@latchkey.test' });
    await expect(
      delivery.deliver({ to: 'bob@acme.test', token: 't', magicLink: 'http://x/login/ott?token=t', expiresAt: new Date() }, {}),
    ).rejects.toThrow();
    delivery.close();
  });

  it('a URL that is not smtp is refused at start-up without echoing it', () => {
    expect(() => createSmtpDelivery({ url: 'http://user:hunter2@example.com', from: 'a@b.c' })).toThrow(/SMTP_URL/);
    try {
      createSmtpDelivery({ url: 'http://user:hunter2@example.com', from: 'a@b.c' });
    } catch (error) {
      expect(String(error)).not.toContain('hunter2');
    }
  });
});
