import { addUserIfAbsent, seedDemoData } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows, ofType } from './support/audit.js';
import { postGraphQL, startLocalhostService, type TestService } from './support/service.js';
import { refreshDemoTokens, SESSIONS_QUERY, signInThroughDemo, type SignedInBrowser } from './support/sessions.js';
import { COST_REPORTED } from './support/cost.js';

type SessionJson = { id: string; current: boolean; client: string | null; userAgent: string | null; address: string | null; amr: string[] };

describe('sessions people can see and end', () => {
  let service: TestService;
  let base: string;
  const gql = (token: string, query: string, variables?: Record<string, unknown>, accept?: string) =>
    postGraphQL(`${base}/graphql`, { query, variables }, { token, accept });
  // Each browser its own address (reported by a trusted proxy on loopback), so the per-address sign-in limits never bind.
  let browsers = 0;
  const signIn = (email: string, userAgent?: string) =>
    signInThroughDemo(base, service.config.dataDir, email, { userAgent, forwardedFor: `203.0.113.${++browsers}` });

  beforeAll(async () => {
    ({ service, base } = await startLocalhostService({ NODE_ENV: 'development', TRUST_PROXY: 'loopback' }));
    await seedDemoData(service.database);
    // Accounts of their own for the tests that sign one account in many times (five links per account and 15 minutes).
    for (const email of ['frank@solo.test', 'grace@solo.test']) await addUserIfAbsent(service.database.db, email);
  }, 60_000);
  afterAll(() => service?.stop());

  it('every access token issued in a session, at sign-in and by refresh, carries its sid; mySessions lists them with current, client, user agent, address and amr', async () => {
    const laptop = await signIn('alice@acme.test', 'Laptop/1.0');
    const phone = await signIn('alice@acme.test', `Phone/${'x'.repeat(400)}`);
    expect(laptop.sessionId).not.toBe(phone.sessionId);
    const refreshed = await refreshDemoTokens(base, laptop.refreshToken!);
    expect(refreshed.status).toBe(200);
    const { decodeJwt } = await import('jose');
    expect(decodeJwt(refreshed.json.access_token!)['sid']).toBe(laptop.sessionId);

    const listed = await gql(laptop.accessToken, SESSIONS_QUERY);
    const sessions = listed.json.data.mySessions as SessionJson[];
    const mine = sessions.filter((session) => [laptop.sessionId, phone.sessionId].includes(session.id));
    expect(mine).toHaveLength(2);
    const laptopRow = mine.find((session) => session.id === laptop.sessionId)!;
    const phoneRow = mine.find((session) => session.id === phone.sessionId)!;
    expect(laptopRow).toMatchObject({
      current: true,
      client: 'latchkey-demo',
      userAgent: 'Laptop/1.0',
      address: '203.0.113.1',
      amr: ['otp'],
    });
    expect(phoneRow.current).toBe(false);
    expect(phoneRow.userAgent).toHaveLength(256);
    // Another account's sessions are never listed.
    const bob = await signIn('bob@acme.test');
    const bobs = (await gql(bob.accessToken, SESSIONS_QUERY)).json.data.mySessions as SessionJson[];
    expect(bobs.map((session) => session.id)).toEqual([bob.sessionId]);
  });

  it('endSession: the session ends, its access tokens are refused at once on this instance and its refresh token is dead; the caller keeps theirs', async () => {
    const kept = await signIn('frank@solo.test');
    const ended = await signIn('frank@solo.test');
    const answer = await gql(kept.accessToken, 'mutation ($id: ID!) { endSession(id: $id) }', { id: ended.sessionId });
    expect(answer.json).toEqual({ data: { endSession: true }, extensions: COST_REPORTED });
    const refused = await gql(ended.accessToken, '{ viewer { subject } }');
    expect(refused.status).toBe(401);
    expect(refused.json.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect((await refreshDemoTokens(base, ended.refreshToken!)).json.error).toBe('invalid_grant');
    expect((await gql(kept.accessToken, '{ viewer { subject } }')).status).toBe(200);
    const listed = (await gql(kept.accessToken, SESSIONS_QUERY)).json.data.mySessions as SessionJson[];
    expect(listed.map((session) => session.id)).not.toContain(ended.sessionId);
    // The audit trail has it: who ended which session, and why.
    const events = ofType(await auditRows(service), 'session.ended').filter(
      (row) => (row.details as { sessionId?: string }).sessionId === ended.sessionId,
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ details: { sessionId: ended.sessionId, reason: 'ended by its user' } });
    expect(events[0]!.actor).toBe(events[0]!.subject);
  });

  it("endSession: an unknown id and another account's session answer NOT_FOUND; a malformed id BAD_USER_INPUT (200 under application/json); nothing ends", async () => {
    const alice = await signIn('alice@acme.test');
    const bob = await signIn('bob@acme.test');
    const end = (id: string, accept?: string) => gql(alice.accessToken, 'mutation ($id: ID!) { endSession(id: $id) }', { id }, accept);
    expect((await end('AAAAAAAAAAAAAAAAAAAAA')).json.errors[0].extensions.code).toBe('NOT_FOUND');
    expect((await end(bob.sessionId)).json.errors[0].extensions.code).toBe('NOT_FOUND');
    const malformed = await end('not a session!', 'application/json');
    expect(malformed.status).toBe(200);
    expect(malformed.json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect((await gql(bob.accessToken, '{ viewer { subject } }')).status).toBe(200);
  });

  it('endOtherSessions ends every session of the caller but the current one', async () => {
    const current = await signIn('grace@solo.test');
    const others: SignedInBrowser[] = [await signIn('grace@solo.test'), await signIn('grace@solo.test')];
    const answer = await gql(current.accessToken, 'mutation { endOtherSessions }');
    expect(answer.json.data.endOtherSessions).toBe(2);
    for (const other of others) expect((await gql(other.accessToken, '{ viewer { subject } }')).status).toBe(401);
    const listed = (await gql(current.accessToken, SESSIONS_QUERY)).json.data.mySessions as SessionJson[];
    expect(listed.map((session) => session.id)).toEqual([current.sessionId]);
  });

  it('endUserSessions: another tenant answers NOT_FOUND, a VIEWER FORBIDDEN, the super-admin and an OWNER on a member end them all', async () => {
    const erin = await signIn('erin@acme.test');
    const erinId = (await gql(erin.accessToken, '{ me { id } }')).json.data.me.id as string;
    const carol = await signIn('carol@globex.test');
    const bob = await signIn('bob@acme.test');
    const endFor = (token: string) => gql(token, 'mutation ($userId: ID!) { endUserSessions(userId: $userId) }', { userId: erinId });
    expect((await endFor(carol.accessToken)).json.errors[0].extensions.code).toBe('NOT_FOUND');
    expect((await endFor(bob.accessToken)).json.errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await gql(erin.accessToken, '{ viewer { subject } }')).status).toBe(200);
    const alice = await signIn('alice@acme.test');
    expect((await endFor(alice.accessToken)).json.data.endUserSessions).toBeGreaterThanOrEqual(1);
    expect((await gql(erin.accessToken, '{ viewer { subject } }')).status).toBe(401);
    // The platform super-admin, on a user of any organization.
    const root = await signIn('root@latchkey.test');
    const bobId = (await gql(bob.accessToken, '{ me { id } }')).json.data.me.id as string;
    const byRoot = await gql(root.accessToken, 'mutation ($userId: ID!) { endUserSessions(userId: $userId) }', { userId: bobId });
    expect(byRoot.json.data.endUserSessions).toBeGreaterThanOrEqual(1);
    expect((await gql(bob.accessToken, '{ viewer { subject } }')).status).toBe(401);
    const missing = await gql(alice.accessToken, 'mutation { endUserSessions(userId: "00000000-0000-4000-8000-000000000000") }');
    expect(missing.json.errors[0].extensions.code).toBe('NOT_FOUND');
    const malformed = await gql(alice.accessToken, 'mutation { endUserSessions(userId: "nope") }', undefined, 'application/json');
    expect(malformed.status).toBe(200);
    expect(malformed.json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });

  it('tokens minted by the CLI carry no sid and are not affected by ending sessions', async () => {
    const token = await service.token('00000000-0000-4000-8000-000000000001');
    const { decodeJwt } = await import('jose');
    expect(decodeJwt(token)['sid']).toBeUndefined();
    expect((await gql(token, '{ viewer { subject } }')).status).toBe(200);
  });
});
