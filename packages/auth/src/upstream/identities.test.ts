import { randomBytes } from 'node:crypto';
import { eq, federatedIdentities, users } from '@latchkey/db';
import { describe, expect, it } from 'vitest';
import { findLinkedUser, linkFederatedIdentity, listFederatedIdentities, unlinkFederatedIdentity, UpstreamError } from '../index.js';
import { database, useOwnDatabase } from '../test-support/own-database.js';
import { insertUser } from '../test-support/users.js';

useOwnDatabase('upstream');

const ISSUER = 'https://accounts.example.com';

const newUser = (email?: string) => insertUser(database.db, email);

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: unknown) => (error instanceof UpstreamError ? error.code : String(error)),
  );

describe('federated identities: accounts are linked by (issuer, subject), never by e-mail', () => {
  it('links, finds, lists and unlinks by the pair', async () => {
    const userId = await newUser();
    const subject = `sub-${randomBytes(4).toString('hex')}`;
    expect(await findLinkedUser(database.db, ISSUER, subject)).toBeNull();
    expect(await linkFederatedIdentity(database.db, { issuer: ISSUER, subject, userId })).toBe('linked');
    expect(await linkFederatedIdentity(database.db, { issuer: ISSUER, subject, userId })).toBe('already-linked');
    expect(await findLinkedUser(database.db, ISSUER, subject)).toBe(userId);
    // The same subject at another issuer is another identity; so is another subject at the same issuer.
    expect(await findLinkedUser(database.db, 'https://other.example.com', subject)).toBeNull();
    expect(await findLinkedUser(database.db, ISSUER, `${subject}x`)).toBeNull();
    expect(await listFederatedIdentities(database.db, userId)).toEqual([{ issuer: ISSUER, subject, createdAt: expect.any(Date) }]);

    expect(await unlinkFederatedIdentity(database.db, { issuer: ISSUER, subject, userId: await newUser() })).toBe(false);
    expect(await findLinkedUser(database.db, ISSUER, subject)).toBe(userId);
    expect(await unlinkFederatedIdentity(database.db, { issuer: ISSUER, subject, userId })).toBe(true);
    expect(await unlinkFederatedIdentity(database.db, { issuer: ISSUER, subject, userId })).toBe(false);
    expect(await findLinkedUser(database.db, ISSUER, subject)).toBeNull();
    expect(await listFederatedIdentities(database.db, userId)).toEqual([]);
  });

  it('a pair linked to one account is refused for another, which changes nothing', async () => {
    const owner = await newUser();
    const other = await newUser();
    const subject = `sub-${randomBytes(4).toString('hex')}`;
    await linkFederatedIdentity(database.db, { issuer: ISSUER, subject, userId: owner });
    expect(await codeOf(linkFederatedIdentity(database.db, { issuer: ISSUER, subject, userId: other }))).toBe('UPSTREAM_LINKED_ELSEWHERE');
    expect(await findLinkedUser(database.db, ISSUER, subject)).toBe(owner);
    expect(await listFederatedIdentities(database.db, other)).toEqual([]);
    // One account may link several upstream identities.
    await linkFederatedIdentity(database.db, { issuer: ISSUER, subject: `${subject}-2`, userId: owner });
    expect((await listFederatedIdentities(database.db, owner)).map((identity) => identity.subject)).toEqual([subject, `${subject}-2`]);
  });

  it('an account with the same e-mail as the upstream account is not found through it', async () => {
    const email = `same-${randomBytes(4).toString('hex')}@acme.test`;
    await newUser(email);
    // Nothing looks at e-mail: an unlinked subject finds no account, whatever address the upstream reports.
    expect(await findLinkedUser(database.db, ISSUER, email)).toBeNull();
    expect(await findLinkedUser(database.db, ISSUER, `sub-${randomBytes(4).toString('hex')}`)).toBeNull();
  });

  it('a suspended account is not found; a deleted account takes its links with it', async () => {
    const userId = await newUser();
    const subject = `sub-${randomBytes(4).toString('hex')}`;
    await linkFederatedIdentity(database.db, { issuer: ISSUER, subject, userId });
    await database.db.update(users).set({ suspended: true }).where(eq(users.id, userId));
    expect(await findLinkedUser(database.db, ISSUER, subject)).toBeNull();
    await database.db.delete(users).where(eq(users.id, userId));
    expect(await database.db.select().from(federatedIdentities).where(eq(federatedIdentities.subject, subject))).toEqual([]);
  });

  it('malformed pairs are refused without a query error', async () => {
    const userId = await newUser();
    for (const [issuer, subject] of [
      ['', 's'],
      [ISSUER, ''],
      [ISSUER, 'a b'],
      [ISSUER, 'x'.repeat(256)],
      ['h'.repeat(2049), 's'],
      [ISSUER, 'tab\t'],
    ]) {
      expect(await codeOf(linkFederatedIdentity(database.db, { issuer: issuer!, subject: subject!, userId }))).toBe(
        'UPSTREAM_IDENTITY_INVALID',
      );
      expect(await findLinkedUser(database.db, issuer!, subject!)).toBeNull();
      expect(await unlinkFederatedIdentity(database.db, { issuer: issuer!, subject: subject!, userId })).toBe(false);
    }
    expect(await codeOf(linkFederatedIdentity(database.db, { issuer: ISSUER, subject: 's', userId: 'not-a-uuid' }))).toBe(
      'UPSTREAM_IDENTITY_INVALID',
    );
    expect(await listFederatedIdentities(database.db, 'not-a-uuid')).toEqual([]);
    expect(await listFederatedIdentities(database.db, userId)).toEqual([]);
  });
});
