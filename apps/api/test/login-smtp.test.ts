import { seedDemoData } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { decodedMail as decoded, startSmtpSink } from './support/smtp-sink.js';
import { startLocalhostService, type TestService } from './support/service.js';

// Real mail: an SMTP sink on loopback receives what the service sends through SMTP_URL.
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
let service: TestService;
let base: string;

beforeAll(async () => {
  sink = await startSmtpSink();
  ({ service, base } = await startLocalhostService({ SMTP_URL: sink.url, MAIL_FROM: 'login@latchkey.test' }));
  await seedDemoData(service.database);
});
afterAll(async () => {
  await service?.stop();
  await sink?.close();
});

const inbox = () => sink.inbox;

describe('sign-in links by e-mail (SMTP_URL)', () => {
  it('a known account gets a mail with a working link; an unknown address gets nothing; both answers are the same', async () => {
    const known = await new BrowserSession(base).request('/ott/generate', { json: { username: 'carol@globex.test' } });
    const unknown = await new BrowserSession(base).request('/ott/generate', { json: { username: 'nobody@globex.test' } });
    expect([known.status, known.text]).toEqual([unknown.status, unknown.text]);
    // A later request for a known address: its delivery starts after the unknown one's, whose only step (looking
    // the address up) is the first of its own. Once its mail is in, the unknown address has been passed over.
    await new BrowserSession(base).request('/ott/generate', { json: { username: 'alice@acme.test' } });
    const recipients = () => inbox().flatMap((mail) => mail.to);
    await expect
      .poll(recipients, { timeout: 30_000, interval: 50 })
      .toEqual(expect.arrayContaining(['carol@globex.test', 'alice@acme.test']));
    expect(recipients().sort()).toEqual(['alice@acme.test', 'carol@globex.test']);
    const carols = inbox().find((mail) => mail.to[0] === 'carol@globex.test')!;
    const link = /http:\/\/localhost:\d+\/login\/ott\?token=[A-Za-z0-9_%-]+/.exec(decoded(carols.raw))?.[0];
    expect(link).toBeDefined();
    const token = decodeURIComponent(new URL(link!).searchParams.get('token')!);
    // Neither answer nor log carries the token.
    expect(known.text).not.toContain(token);
    expect(service.logText()).not.toContain(token);
    const consumed = await new BrowserSession(base).request('/login/ott', { form: { token } });
    expect(consumed.status).toBe(303);
  });
});
