import { randomToken } from '@latchkey/auth';
import { findAnyUserIdByEmail, seedDemoData } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows, ofType } from './support/audit.js';
import { BrowserSession } from './support/browser-session.js';
import { outboxOf, tokenOf } from './support/outbox.js';
import { postGraphQL, startLocalhostService, type TestService } from './support/service.js';

// docs/audit.md "Events": what a sign-in over HTTP records, and policy denials (field-level ones aggregated).

let service: TestService;
let base: string;
let alice: string;
let bob: string;

beforeAll(async () => {
  ({ service, base } = await startLocalhostService());
  await seedDemoData(service.database);
  alice = (await findAnyUserIdByEmail(service.database.db, 'alice@acme.test'))!;
  bob = (await findAnyUserIdByEmail(service.database.db, 'bob@acme.test'))!;
}, 60_000);
afterAll(() => service?.stop());

/** A user agent longer than the 256 characters kept. */
const LONG_AGENT = `AuditTest/1.0 ${'x'.repeat(300)}`;

describe('audit events of a sign-in (docs/audit.md "Events")', () => {
  it('audit sign-in: a one-time-token sign-in over HTTP records sign_in.started and sign_in.succeeded with the client address, the user agent cut to 256 characters and the request id, and no token or code', async () => {
    const before = (await auditRows(service)).length;
    const browser = new BrowserSession(base);
    const outbox = outboxOf(service.config.dataDir);
    const sent = outbox.count();
    const headers = (requestId: string) => ({ 'user-agent': LONG_AGENT, 'x-request-id': requestId });
    expect(
      (await browser.request('/ott/generate', { form: { username: 'alice@acme.test' }, headers: headers('audit-start-1') })).status,
    ).toBe(303);
    const message = await outbox.next(sent, 'alice@acme.test');
    const token = tokenOf(message);
    const answer = await browser.request('/login/ott', { form: { token }, headers: headers('audit-finish-1') });
    expect(answer.status).toBe(303);
    expect(answer.location).toBe('/account');
    const rows = (await auditRows(service)).slice(before);
    const [started] = ofType(rows, 'sign_in.started');
    expect(started).toMatchObject({
      details: { method: 'OTT' },
      address: '127.0.0.1',
      userAgent: LONG_AGENT.slice(0, 256),
      requestId: 'audit-start-1',
    });
    const [succeeded] = ofType(rows, 'sign_in.succeeded');
    expect(succeeded).toMatchObject({
      actor: alice,
      subject: alice,
      details: { method: 'OTT', amr: ['otp'] },
      address: '127.0.0.1',
      userAgent: LONG_AGENT.slice(0, 256),
      requestId: 'audit-finish-1',
    });
    const written = JSON.stringify(rows);
    expect(written).not.toContain(token);
    if (message.code) expect(written).not.toContain(message.code);

    // The account page shows the account's own recent sign-ins.
    const account = await browser.request('/account');
    expect(account.status).toBe(200);
    expect(account.text).toContain('Recent sign-ins');
    expect(account.text).toMatch(/<td>[^<]*<\/td><td>[^<]+<\/td><td>signed in<\/td><td>127\.0\.0\.1<\/td><td>AuditTest\/1\.0 x+<\/td>/);
  }, 60_000);

  it('audit sign-in: a wrong one-time token records sign_in.failed (method OTT) with the address, and not the token tried', async () => {
    const before = (await auditRows(service)).length;
    const wrong = randomToken();
    const answer = await new BrowserSession(base).request('/login/ott', {
      form: { token: wrong },
      headers: { 'x-request-id': 'audit-wrong-1' },
    });
    expect(answer.status).toBe(401);
    const rows = (await auditRows(service)).slice(before);
    expect(ofType(rows, 'sign_in.failed')).toEqual([
      expect.objectContaining({ details: { method: 'OTT' }, address: '127.0.0.1', requestId: 'audit-wrong-1', subject: null }),
    ]);
    expect(JSON.stringify(rows)).not.toContain(wrong);
  }, 60_000);
});

describe('audit events of policy denials (docs/audit.md "Policy denials")', () => {
  it("audit denials: field-level denials are aggregated to one policy.denied event per request and ability, with policy, ability, reason and the record's type and id only", async () => {
    const before = (await auditRows(service)).length;
    const token = await service.token(bob);
    const query = '{ documents(first: 20) { edges { node { id internalNotes owner { email } } } } }';
    const response = await postGraphQL(service.graphqlUrl, { query }, { token, headers: { 'x-request-id': 'audit-fields-1' } });
    const body = response.json as { data: { documents: { edges: unknown[] } }; errors?: { path: unknown[] }[] };
    // Several rows were refused each field (so aggregation has something to do) ...
    expect(body.errors!.filter((error) => error.path.includes('internalNotes')).length).toBeGreaterThan(1);
    const denied = ofType((await auditRows(service)).slice(before), 'policy.denied');
    // ... and each ability is recorded once for the request.
    expect(denied.map((row) => `${row.details['policy']}.${row.details['ability']}`).sort()).toEqual(
      [...new Set(denied.map((row) => `${row.details['policy']}.${row.details['ability']}`))].sort(),
    );
    const notes = denied.find((row) => row.details['ability'] === 'viewInternalNotes')!;
    expect(notes).toMatchObject({ actor: bob, requestId: 'audit-fields-1', address: '127.0.0.1' });
    expect(notes.details).toEqual({
      policy: 'DocumentPolicy',
      ability: 'viewInternalNotes',
      reason: 'forbidden',
      recordType: 'Document',
      recordId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      aggregated: true,
    });
  }, 60_000);

  it('audit denials: a second request is a second event; a record-level denial names its record, a route-level one none (REST DELETE)', async () => {
    const erin = (await findAnyUserIdByEmail(service.database.db, 'erin@acme.test'))!;
    const list = (
      await postGraphQL(
        service.graphqlUrl,
        { query: '{ documents(first: 20) { edges { node { id title } } } }' },
        { token: await service.token(erin) },
      )
    ).json as { data: { documents: { edges: { node: { id: string; title: string } }[] } } };
    const quarterly = list.data.documents.edges.find((edge) => edge.node.title === 'Quarterly plan')!.node.id;
    const before = (await auditRows(service)).length;
    const viewer = await service.token(bob);
    const query = '{ documents(first: 20) { edges { node { internalNotes } } } }';
    await postGraphQL(service.graphqlUrl, { query }, { token: viewer });
    await postGraphQL(service.graphqlUrl, { query }, { token: viewer });
    const remove = (token: string) =>
      fetch(`${service.url}/api/documents/${quarterly}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    expect((await remove(viewer)).status).toBe(403);
    expect((await remove(await service.token(erin))).status).toBe(403);
    const denied = ofType((await auditRows(service)).slice(before), 'policy.denied');
    expect(denied.filter((row) => row.details['ability'] === 'viewInternalNotes')).toHaveLength(2);
    expect(denied.find((row) => row.actor === bob && row.details['ability'] === 'holdsRole')?.details).toEqual({
      policy: 'AccountPolicy',
      ability: 'holdsRole',
      reason: 'forbidden',
      recordType: null,
      recordId: null,
    });
    expect(denied.find((row) => row.actor === erin)?.details).toEqual({
      policy: 'DocumentPolicy',
      ability: 'delete',
      reason: 'forbidden',
      recordType: 'Document',
      recordId: quarterly,
    });
  }, 60_000);

  it('audit hot path: an allowed viewer query records nothing', async () => {
    const before = (await auditRows(service)).length;
    const token = await service.token(alice);
    for (let i = 0; i < 5; i += 1) {
      const response = await postGraphQL(service.graphqlUrl, { query: '{ viewer { subject } }' }, { token });
      expect(response.status).toBe(200);
    }
    expect(await auditRows(service)).toHaveLength(before);
  }, 60_000);
});
