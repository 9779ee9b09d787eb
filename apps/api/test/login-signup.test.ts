import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { eq, seedDemoData, users } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { startTestService, type TestService } from './support/service.js';

const messages = (service: TestService) => {
  const dir = path.join(service.config.dataDir, 'outbox');
  return existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.json')).length : 0;
};
const accountOf = async (service: TestService, email: string) =>
  (await service.database.db.select().from(users).where(eq(users.email, email)))[0];

describe('accounts are never created implicitly; self sign-up is off by default (configurable)', () => {
  let closed: TestService;
  let open: TestService;
  beforeAll(async () => {
    closed = await startTestService();
    open = await startTestService({ SELF_SIGNUP: 'true' });
    await seedDemoData(closed.database);
    await seedDemoData(open.database);
  });
  afterAll(async () => {
    await closed?.stop();
    await open?.stop();
  });

  it('by default an unknown address gets the same answer and nothing else: no account, no message', async () => {
    const answer = await new BrowserSession(closed.url).request('/ott/generate', { json: { username: 'Newcomer@Example.TEST' } });
    expect(answer.status).toBe(202);
    // A later request for a known address: its delivery starts after the unknown one's, whose only step (looking
    // the address up) is the first of its own. Once its message is in, the unknown address has been passed over.
    await new BrowserSession(closed.url).request('/ott/generate', { json: { username: 'alice@acme.test' } });
    await expect.poll(() => messages(closed), { timeout: 30_000, interval: 50 }).toBe(1);
    expect(await accountOf(closed, 'newcomer@example.test')).toBeUndefined();
    expect(messages(closed)).toBe(1);
  });

  it('with SELF_SIGNUP=true the unknown address gets an account (e-mail unverified) and a sign-in link', async () => {
    const answer = await new BrowserSession(open.url).request('/ott/generate', { json: { username: 'Newcomer@Example.TEST' } });
    expect(answer.status).toBe(202);
    // The account is made before the message is written: once the message is in, both are there.
    await expect.poll(() => messages(open), { timeout: 30_000, interval: 50 }).toBe(1);
    expect(await accountOf(open, 'newcomer@example.test')).toMatchObject({
      email: 'newcomer@example.test',
      emailVerified: false,
      superAdmin: false,
    });
    expect(messages(open)).toBe(1);
  });
});
