import { randomUUID } from 'node:crypto';
import { memberships, organizations, seedDemoData, users } from '@latchkey/db';
import { eq } from 'drizzle-orm';
import { onDenied, type DenialEvent } from '@latchkey/policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postGraphQL, startTestService, type TestService } from './support/service.js';
import { COST_REPORTED } from './support/cost.js';

const ME = '{ me { email emailVerified memberships { role organization { slug plan billingEmail } } } }';

let service: TestService;
const idOf = async (email: string) => (await service.database.db.select({ id: users.id }).from(users).where(eq(users.email, email)))[0]!.id;

beforeAll(async () => {
  service = await startTestService();
  await seedDemoData(service.database);
});
afterAll(() => service?.stop());

describe('me: the account behind the token, read at request time', () => {
  it('alice (OWNER of acme) sees her memberships and the billing e-mail', async () => {
    const token = await service.token(await idOf('alice@acme.test'));
    const res = await postGraphQL(service.graphqlUrl, { query: ME }, { token });
    expect(res.json).toEqual({
      data: {
        me: {
          email: 'alice@acme.test',
          emailVerified: true,
          memberships: [{ role: 'OWNER', organization: { slug: 'acme', plan: 'PRO', billingEmail: 'billing@acme.test' } }],
        },
      },
      extensions: COST_REPORTED,
    });
  });

  it('spec Authorization 12: bob (VIEWER) gets billingEmail null with FORBIDDEN at its path; the rest is returned, 200', async () => {
    const token = await service.token(await idOf('bob@acme.test'));
    const res = await postGraphQL(service.graphqlUrl, { query: ME }, { token });
    expect(res.status).toBe(200);
    expect(res.json.data.me.memberships).toEqual([{ role: 'VIEWER', organization: { slug: 'acme', plan: 'PRO', billingEmail: null } }]);
    expect(res.json.errors).toEqual([
      {
        message: 'You are not allowed to do this.',
        locations: [{ line: 1, column: 72 }],
        path: ['me', 'memberships', 0, 'organization', 'billingEmail'],
        extensions: { code: 'FORBIDDEN' },
      },
    ]);
    expect(res.text).not.toMatch(/OrganizationPolicy|viewBilling/);
  });

  it('spec Authentication 3: a suspended account is refused with its still-valid token (volatile attribute read now)', async () => {
    const email = `suspended-${randomUUID()}@acme.test`;
    const [user] = await service.database.db.insert(users).values({ email, emailVerified: true }).returning({ id: users.id });
    const [acme] = await service.database.db.select().from(organizations).where(eq(organizations.slug, 'acme'));
    await service.database.db.insert(memberships).values({ organizationId: acme!.id, userId: user!.id, role: 'ADMIN' });
    const token = await service.token(user!.id);
    try {
      const before = await postGraphQL(service.graphqlUrl, { query: '{ me { email } }' }, { token });
      expect(before.json).toEqual({ data: { me: { email } }, extensions: COST_REPORTED });
      await service.database.db.update(users).set({ suspended: true }).where(eq(users.id, user!.id));
      const after = await postGraphQL(service.graphqlUrl, { query: '{ me { email } }' }, { token });
      expect(after.status).toBe(200);
      expect(after.json.data).toEqual({ me: null });
      expect(after.json.errors[0]).toMatchObject({ path: ['me'], extensions: { code: 'FORBIDDEN' } });
    } finally {
      await service.database.db.delete(users).where(eq(users.id, user!.id));
    }
  });

  it('a token whose subject is no user: me is null without an error', async () => {
    for (const subject of [randomUUID(), 'script-runner']) {
      const res = await postGraphQL(service.graphqlUrl, { query: '{ me { email } }' }, { token: await service.token(subject) });
      expect(res.json).toEqual({ data: { me: null }, extensions: COST_REPORTED });
    }
  });

  it('a guest is refused before execution (route level)', async () => {
    const res = await postGraphQL(service.graphqlUrl, { query: '{ me { email } }' });
    expect(res.status).toBe(401);
    expect(res.json.data).toBeUndefined();
  });
});

describe("organization(slug): spec Authorization 6, existence of another tenant's record is not revealed", () => {
  const ORG = 'query ($slug: String!) { organization(slug: $slug) { slug plan } }';
  const ask = async (email: string | null, slug: string) =>
    postGraphQL(service.graphqlUrl, { query: ORG, variables: { slug } }, email ? { token: await service.token(await idOf(email)) } : {});

  it('a member gets the organization', async () => {
    expect((await ask('alice@acme.test', 'acme')).json).toEqual({
      data: { organization: { slug: 'acme', plan: 'PRO' } },
      extensions: COST_REPORTED,
    });
  });

  it("another tenant's organization answers exactly like a missing one: null + NOT_FOUND, 200", async () => {
    const foreign = await ask('carol@globex.test', 'acme');
    const missing = await ask('carol@globex.test', 'no-such-org');
    expect(foreign.status).toBe(200);
    expect(foreign.json).toEqual(missing.json);
    expect(foreign.json).toEqual({
      data: { organization: null },
      errors: [
        {
          message: 'The requested record was not found.',
          locations: [{ line: 1, column: 26 }],
          path: ['organization'],
          extensions: { code: 'NOT_FOUND' },
        },
      ],
      extensions: COST_REPORTED,
    });
  });

  it('the hidden denial is still published on the denial stream (spec Events 2)', async () => {
    const seen: DenialEvent[] = [];
    const stop = onDenied((event) => seen.push(event));
    try {
      await ask('carol@globex.test', 'acme');
    } finally {
      stop();
    }
    // The server runs in this process: the stream is the same one.
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      type: 'denied',
      policy: 'OrganizationPolicy',
      ability: 'view',
      reason: 'forbidden',
      handler: 'Query.organization',
    });
  });

  it('the platform super-admin passes the before hook', async () => {
    expect((await ask('root@latchkey.test', 'globex')).json).toEqual({
      data: { organization: { slug: 'globex', plan: 'FREE' } },
      extensions: COST_REPORTED,
    });
  });

  it('a malformed slug is BAD_USER_INPUT, never a 5xx', async () => {
    for (const slug of ['ACME', 'a'.repeat(200), '../etc', '']) {
      const res = await ask('alice@acme.test', slug);
      expect(res.status).toBe(200);
      expect(res.json.data).toEqual({ organization: null });
      expect(res.json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    }
  });
});
