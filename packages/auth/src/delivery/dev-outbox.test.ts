import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDevOutbox, OutboxRefusedError, readOutbox } from '../index.js';

const dir = path.join(mkdtempSync(path.join(tmpdir(), 'latchkey-outbox-')), 'outbox');
afterAll(() => rmSync(path.dirname(dir), { recursive: true, force: true }));

describe('development outbox (delivery handler)', () => {
  it('writes each message as a file (owner-only), echoes it, and reads the latest back in order', async () => {
    const echoed: string[] = [];
    // One message a second: the files' order is the order sent, whatever the machine's speed.
    let sent = Date.parse('2030-01-01T00:00:00Z');
    const now = () => new Date((sent += 1000));
    const outbox = createDevOutbox({ dir, production: false, echo: { write: (text: string) => echoed.push(text) }, now });
    const expiresAt = new Date(Date.now() + 300_000);
    for (const to of ['alice@acme.test', 'bob@acme.test', 'erin@acme.test']) {
      await outbox.deliver(
        { to, token: `token-for-${to}`, magicLink: `http://localhost:4000/login/ott?token=token-for-${to}`, expiresAt },
        {},
      );
    }
    const files = readdirSync(dir);
    expect(files).toHaveLength(3);
    expect(files.every((name) => name.endsWith('.json'))).toBe(true);
    expect(statSync(path.join(dir, files[0]!)).mode & 0o077).toBe(0);
    expect(readFileSync(path.join(dir, files[0]!), 'utf8')).toContain('/login/ott?token=');
    expect(echoed).toHaveLength(3);
    expect(echoed[0]).toContain('to alice@acme.test');

    const latest = await readOutbox(dir, 2);
    expect(latest.map((message) => message.to)).toEqual(['bob@acme.test', 'erin@acme.test']);
    expect(latest[1]).toMatchObject({
      subject: 'Your Latchkey sign-in link',
      magicLink: 'http://localhost:4000/login/ott?token=token-for-erin@acme.test',
    });
    expect(latest[1]!.text).toContain('within 5 minute(s)');
  });

  it('is refused in production', () => {
    expect(() => createDevOutbox({ dir, production: true })).toThrow(OutboxRefusedError);
  });

  it('an outbox that was never written reads as empty', async () => {
    expect(await readOutbox(path.join(dir, 'nothing-here'))).toEqual([]);
  });
});
