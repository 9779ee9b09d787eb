/**
 * spec Multi-factor rules 6 / RFC 9470: step-up at the resource server, over real HTTP against the seeded
 * database. Operations marked in the SDL (`@stepUp`) or judged by their arguments (a role change to OWNER)
 * answer an allowed caller whose access token is too weak or too old with INSUFFICIENT_USER_AUTHENTICATION and
 * the `WWW-Authenticate` challenge; everyone else gets exactly what they got before.
 */
import { documents, memberships, passkeys, seedDemoData } from '@latchkey/db';
import { and, eq } from 'drizzle-orm';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from './support/chromium.js';
import { callRest, demoOf, reseed, STEPPED_UP, type Demo, type Persona } from './support/demo.js';
import { postGraphQL, startLocalhostService, startTestService, type TestService } from './support/service.js';
import { startSmtpSink } from './support/smtp-sink.js';

const GQL = 'application/graphql-response+json';
const JSON_TYPE = 'application/json';
const PHR = 'urn:latchkey:acr:phr';
const TWO_FACTOR = 'urn:latchkey:acr:2fa';
const ONE_FACTOR = 'urn:latchkey:acr:1fa';

const HOLD =
  'mutation ($id: ID!, $hold: Boolean!) { setLegalHold(id: $id, legalHold: $hold) { document { id legalHold } userErrors { code } } }';
const ROLE = 'mutation ($input: ChangeMemberRoleInput!) { changeMemberRole(input: $input) { membership { role } userErrors { code } } }';
const REMOVE_PASSKEY = 'mutation ($id: ID!) { removePasskey(id: $id) { removedPasskeyId } }';
const VIEWER_CAN = 'query ($id: ID!) { document(id: $id) { id viewerCan { update publish archive delete setLegalHold } } }';

const CHALLENGE_PHR =
  'Bearer error="insufficient_user_authentication", error_description="A different authentication level is required", acr_values="urn:latchkey:acr:phr"';
const CHALLENGE_FRESH =
  'Bearer error="insufficient_user_authentication", error_description="More recent authentication is required", max_age=300';
const CHALLENGE_OWNER =
  'Bearer error="insufficient_user_authentication", error_description="A different authentication level is required", acr_values="urn:latchkey:acr:2fa", max_age=900';

let service: TestService;
let demo: Demo;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());
beforeEach(async () => {
  await reseed(service.database);
  demo = await demoOf(service);
});

const now = () => Math.floor(Date.now() / 1000);
/** A token as an e-mailed link (one-time token) sign-in gives it: one factor, just now. */
const ottToken = (persona: Persona) => demo.token(persona, { amr: ['otp'], acr: ONE_FACTOR });
const idOf = (title: string) => demo.documentId.get(title)!;
const gql = async (token: string | undefined, query: string, variables: Record<string, unknown>, accept = GQL) =>
  postGraphQL(service.graphqlUrl, { query, variables }, { token, accept });
const locationOf = (query: string, field: string) => {
  const index = query.indexOf(`${field}(`);
  return { line: 1, column: index + 1 };
};
const legalHoldOf = async (title: string) =>
  (
    await service.database.db
      .select({ legalHold: documents.legalHold })
      .from(documents)
      .where(eq(documents.id, idOf(title)))
  )[0]!.legalHold;
const roleOf = async (persona: Persona) => {
  const [row] = await service.database.db
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.userId, demo.userId[persona])));
  return row?.role;
};

describe('spec Multi-factor rules 6 / RFC 9470: setLegalHold asks for a phishing-resistant sign-in', () => {
  it('a token from a one-time-token sign-in: 401 + WWW-Authenticate under graphql-response+json, 200 under application/json; nothing written', async () => {
    const token = await ottToken('alice');
    const variables = { id: idOf('Quarterly plan'), hold: true };
    const expected = {
      data: { setLegalHold: null },
      errors: [
        {
          message: 'A different authentication level is required.',
          locations: [locationOf(HOLD, 'setLegalHold')],
          path: ['setLegalHold'],
          extensions: { code: 'INSUFFICIENT_USER_AUTHENTICATION', acr_values: PHR },
        },
      ],
    };
    const strict = await gql(token, HOLD, variables, GQL);
    expect(strict.status, strict.text).toBe(401);
    expect(strict.headers.get('www-authenticate')).toBe(CHALLENGE_PHR);
    expect(strict.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    expect(strict.json).toEqual(expected);

    const legacy = await gql(token, HOLD, variables, JSON_TYPE);
    expect(legacy.status, legacy.text).toBe(200);
    expect(legacy.headers.get('www-authenticate')).toBe(CHALLENGE_PHR);
    expect(legacy.json).toEqual(expected);
    expect(await legalHoldOf('Quarterly plan')).toBe(false);
  });

  it('in a batch each entry answers for itself: 200, the step-up error in its entry', async () => {
    const token = await ottToken('alice');
    const res = await postGraphQL(
      service.graphqlUrl,
      [{ query: HOLD, variables: { id: idOf('Quarterly plan'), hold: true } }, { query: '{ viewer { acr } }' }],
      { token },
    );
    expect(res.status).toBe(200);
    expect(res.json[0].errors[0].extensions).toEqual({ code: 'INSUFFICIENT_USER_AUTHENTICATION', acr_values: PHR });
    expect(res.json[1]).toEqual({ data: { viewer: { acr: ONE_FACTOR } } });
  });

  it('two factors are not enough, nor a token without acr or with a level the API does not know', async () => {
    for (const claims of [{ acr: TWO_FACTOR, amr: ['otp', 'mfa'] }, { amr: ['otp'] }, { acr: 'urn:latchkey:acr:passkey', amr: ['swk'] }]) {
      const res = await gql(await demo.token('alice', claims), HOLD, { id: idOf('Quarterly plan'), hold: true });
      expect(res.status, JSON.stringify(claims)).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(CHALLENGE_PHR);
      expect(res.json.errors[0].extensions).toEqual({ code: 'INSUFFICIENT_USER_AUTHENTICATION', acr_values: PHR });
    }
    expect(await legalHoldOf('Quarterly plan')).toBe(false);
  });

  it('a phishing-resistant sign-in (passkey) succeeds, however long ago (no max_age on this mark)', async () => {
    const fresh = await gql(await demo.token('alice', STEPPED_UP), HOLD, { id: idOf('Quarterly plan'), hold: true });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('www-authenticate')).toBeNull();
    expect(fresh.json).toEqual({ data: { setLegalHold: { document: { id: idOf('Quarterly plan'), legalHold: true }, userErrors: [] } } });
    const old = await gql(await demo.token('alice', { ...STEPPED_UP, authTime: now() - 86_400 }), HOLD, {
      id: idOf('Quarterly plan'),
      hold: false,
    });
    expect(old.json.data.setLegalHold.document.legalHold).toBe(false);
  });

  it('a guest is still UNAUTHENTICATED (401, Bearer), refused before execution', async () => {
    const res = await gql(undefined, HOLD, { id: idOf('Quarterly plan'), hold: true });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(res.json).toEqual({ errors: [{ message: 'Sign in to perform this operation.', extensions: { code: 'UNAUTHENTICATED' } }] });
  });

  it('a caller who is not allowed at all gets FORBIDDEN (200), never a challenge, whatever the token', async () => {
    for (const persona of ['bob', 'erin'] as const) {
      for (const token of [await ottToken(persona), await demo.token(persona, STEPPED_UP)]) {
        const res = await gql(token, HOLD, { id: idOf('Quarterly plan'), hold: true });
        expect(res.status, res.text).toBe(200);
        expect(res.headers.get('www-authenticate')).toBeNull();
        expect(res.json).toEqual({
          data: { setLegalHold: null },
          errors: [
            {
              message: 'You are not allowed to do this.',
              locations: [locationOf(HOLD, 'setLegalHold')],
              path: ['setLegalHold'],
              extensions: { code: 'FORBIDDEN' },
            },
          ],
        });
      }
    }
  });

  it('viewerCan keeps answering the ability alone: the same for a weak token as for a stepped-up one', async () => {
    for (const persona of ['alice', 'bob', 'erin', 'carol', 'root'] as const) {
      for (const title of ['Quarterly plan', 'Litigation memo', 'Draft roadmap']) {
        const weak = await gql(await ottToken(persona), VIEWER_CAN, { id: idOf(title) });
        const strong = await gql(await demo.token(persona, STEPPED_UP), VIEWER_CAN, { id: idOf(title) });
        expect(weak.status).toBe(strong.status);
        expect(weak.json, `${persona} ${title}`).toEqual(strong.json);
      }
    }
    const alice = await gql(await ottToken('alice'), VIEWER_CAN, { id: idOf('Quarterly plan') });
    expect(alice.json.data.document.viewerCan.setLegalHold).toBe(true);
  });

  it('the challenge comes with the route-level marks, before the record-level rules: another tenant steps up, then gets NOT_FOUND', async () => {
    const weak = await gql(await ottToken('carol'), HOLD, { id: idOf('Quarterly plan'), hold: true });
    expect(weak.status).toBe(401);
    expect(weak.json.errors[0].extensions.code).toBe('INSUFFICIENT_USER_AUTHENTICATION');
    const strong = await gql(await demo.token('carol', STEPPED_UP), HOLD, { id: idOf('Quarterly plan'), hold: true });
    expect(strong.status).toBe(200);
    expect(strong.json.errors[0].extensions).toEqual({ code: 'NOT_FOUND' });
  });
});

describe('spec Multi-factor rules 6 / RFC 9470: changeMemberRole to OWNER asks for two factors within 15 minutes', () => {
  const input = (persona: Persona, role: string, organization = 'acme') => ({
    input: { organization, userId: demo.userId[persona], role },
  });

  it('to EDITOR with a one-factor token: done, no challenge', async () => {
    const res = await gql(await ottToken('alice'), ROLE, input('bob', 'EDITOR'));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ data: { changeMemberRole: { membership: { role: 'EDITOR' }, userErrors: [] } } });
  });

  it('to OWNER with a one-factor token: 401 + challenge (acr_values and max_age), nothing written', async () => {
    for (const accept of [GQL, JSON_TYPE]) {
      const res = await gql(await ottToken('alice'), ROLE, input('bob', 'OWNER'), accept);
      expect(res.status, res.text).toBe(accept === GQL ? 401 : 200);
      expect(res.headers.get('www-authenticate')).toBe(CHALLENGE_OWNER);
      expect(res.json).toEqual({
        data: { changeMemberRole: null },
        errors: [
          {
            message: 'A different authentication level is required.',
            locations: [locationOf(ROLE, 'changeMemberRole')],
            path: ['changeMemberRole'],
            extensions: { code: 'INSUFFICIENT_USER_AUTHENTICATION', acr_values: TWO_FACTOR, max_age: 900 },
          },
        ],
      });
    }
    expect(await roleOf('bob')).toBe('VIEWER');
  });

  it('to OWNER with a two-factor sign-in of 20 minutes ago: challenged; of just now: done', async () => {
    const old = await gql(
      await demo.token('alice', { acr: TWO_FACTOR, amr: ['otp', 'mfa'], authTime: now() - 1200 }),
      ROLE,
      input('bob', 'OWNER'),
    );
    expect(old.status).toBe(401);
    expect(old.headers.get('www-authenticate')).toBe(CHALLENGE_OWNER);
    expect(await roleOf('bob')).toBe('VIEWER');
    const fresh = await gql(await demo.token('alice', { acr: TWO_FACTOR, amr: ['otp', 'mfa'] }), ROLE, input('bob', 'OWNER'));
    expect(fresh.status).toBe(200);
    expect(fresh.json).toEqual({ data: { changeMemberRole: { membership: { role: 'OWNER' }, userErrors: [] } } });
    expect(await roleOf('bob')).toBe('OWNER');
  });

  it('a caller not allowed to make anyone OWNER gets FORBIDDEN, another tenant NOT_FOUND: never a challenge', async () => {
    const viewer = await gql(await ottToken('bob'), ROLE, input('erin', 'OWNER'));
    expect(viewer.status).toBe(200);
    expect(viewer.json.errors[0].extensions).toEqual({ code: 'FORBIDDEN' });
    // an ADMIN may not grant a role above their own
    await service.database.db.update(memberships).set({ role: 'ADMIN' }).where(eq(memberships.userId, demo.userId.bob));
    const admin = await gql(await ottToken('bob'), ROLE, input('erin', 'OWNER'));
    expect(admin.json.errors[0].extensions).toEqual({ code: 'FORBIDDEN' });
    const foreign = await gql(await ottToken('carol'), ROLE, input('bob', 'OWNER'));
    expect(foreign.status).toBe(200);
    expect(foreign.json.errors[0].extensions).toEqual({ code: 'NOT_FOUND' });
    expect(await roleOf('erin')).toBe('EDITOR');
  });
});

describe('spec Multi-factor rules 6 / RFC 9470: removing a passkey (a credential change) asks for a sign-in within 5 minutes', () => {
  const addPasskey = () =>
    service.database.db.insert(passkeys).values({
      id: 'alice-key-1',
      userId: demo.userId.alice,
      label: 'Laptop',
      userHandle: `handle-${demo.userId.alice}`,
      publicKey: new Uint8Array([1, 2, 3]),
      counter: 1,
      transports: ['internal'],
      deviceType: 'singleDevice',
      backedUp: false,
      aaguid: '00000000-0000-0000-0000-000000000000',
      rpId: 'localhost',
    });

  it('a sign-in of 10 minutes ago, even a passkey one: 401 + max_age challenge; the passkey stays', async () => {
    await addPasskey();
    const token = await demo.token('alice', { ...STEPPED_UP, authTime: now() - 600 });
    const res = await gql(token, REMOVE_PASSKEY, { id: 'alice-key-1' });
    expect(res.status, res.text).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(CHALLENGE_FRESH);
    expect(res.json).toEqual({
      data: { removePasskey: null },
      errors: [
        {
          message: 'More recent authentication is required.',
          locations: [locationOf(REMOVE_PASSKEY, 'removePasskey')],
          path: ['removePasskey'],
          extensions: { code: 'INSUFFICIENT_USER_AUTHENTICATION', max_age: 300 },
        },
      ],
    });
    expect(await service.database.db.select({ id: passkeys.id }).from(passkeys)).toEqual([{ id: 'alice-key-1' }]);
  });

  it('a one-factor sign-in of just now: removed', async () => {
    await addPasskey();
    const res = await gql(await ottToken('alice'), REMOVE_PASSKEY, { id: 'alice-key-1' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ data: { removePasskey: { removedPasskeyId: 'alice-key-1' } } });
  });

  it('renaming is not a credential change: no step-up', async () => {
    await addPasskey();
    const rename = 'mutation { renamePasskey(id: "alice-key-1", label: "Old laptop") { passkey { label } } }';
    const res = await postGraphQL(
      service.graphqlUrl,
      { query: rename },
      { token: await demo.token('alice', { authTime: now() - 86_400 }) },
    );
    expect(res.json).toEqual({ data: { renamePasskey: { passkey: { label: 'Old laptop' } } } });
  });
});

describe('spec Multi-factor rules 6 / RFC 9470 on REST: POST /api/documents/:id/legal-hold', () => {
  const hold = async (token: string | undefined, title: string, body: unknown = { legalHold: true }) =>
    callRest(service, 'POST', `/api/documents/${idOf(title)}/legal-hold`, { token, body });

  it('a one-factor token: 401, the challenge, and the RFC 9470 parameters in the body; nothing written', async () => {
    const res = await hold(await ottToken('alice'), 'Quarterly plan');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(CHALLENGE_PHR);
    expect(res.json).toEqual({
      statusCode: 401,
      message: 'A different authentication level is required.',
      error: 'Unauthorized',
      code: 'INSUFFICIENT_USER_AUTHENTICATION',
      acr_values: PHR,
    });
    expect(await legalHoldOf('Quarterly plan')).toBe(false);
  });

  it('a passkey sign-in: 200 with the document; guests 401 Bearer, VIEWERs and EDITORs 403, another tenant 404 (after stepping up)', async () => {
    const done = await hold(await demo.token('alice', STEPPED_UP), 'Quarterly plan');
    expect(done.status, done.text).toBe(200);
    expect(done.json).toMatchObject({ id: idOf('Quarterly plan'), legalHold: true, viewerCan: { setLegalHold: true, delete: false } });
    expect(await legalHoldOf('Quarterly plan')).toBe(true);

    const guest = await hold(undefined, 'Draft roadmap');
    expect(guest.status).toBe(401);
    expect(guest.headers.get('www-authenticate')).toBe('Bearer');
    for (const persona of ['bob', 'erin'] as const) {
      const denied = await hold(await ottToken(persona), 'Draft roadmap');
      expect(denied.status).toBe(403);
      expect(denied.headers.get('www-authenticate')).toBeNull();
      expect(denied.json).toEqual({ statusCode: 403, message: 'You are not allowed to do this.', error: 'Forbidden' });
    }
    expect((await hold(await ottToken('carol'), 'Draft roadmap')).status).toBe(401);
    expect((await hold(await demo.token('carol', STEPPED_UP), 'Draft roadmap')).status).toBe(404);
    expect(await legalHoldOf('Draft roadmap')).toBe(false);
  });

  it('the body must be { legalHold: true | false }', async () => {
    const token = await demo.token('alice', STEPPED_UP);
    for (const body of [{}, { legalHold: 'yes' }, { legalHold: true, title: 'x' }, [true]]) {
      const res = await hold(token, 'Quarterly plan', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.code).toBe('BAD_USER_INPUT');
    }
    const lifted = await hold(token, 'Litigation memo', { legalHold: false });
    expect(lifted.json).toMatchObject({ legalHold: false, viewerCan: { delete: true } });
  });
});

describe.runIf(hasChromium)(
  'spec Multi-factor rules 6 / RFC 9470 in Chromium: the demo client answers a step-up challenge and retries once',
  () => {
    let local: TestService;
    let browser: Browser;
    let base: string;
    let sink: Awaited<ReturnType<typeof startSmtpSink>>;

    beforeAll(async () => {
      sink = await startSmtpSink();
      ({ service: local, base } = await startLocalhostService({
        NODE_ENV: 'development',
        SMTP_URL: sink.url,
        MAIL_FROM: 'login@latchkey.test',
      }));
      await seedDemoData(local.database);
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
      await local?.stop();
      await sink?.close();
    });

    it('removePasskey answered with the challenge: a new authorization request with max_age, then the removal is retried and done', async () => {
      const alice = (await demoOf(local)).userId.alice;
      await local.database.db.insert(passkeys).values({
        id: 'alice-key-1',
        userId: alice,
        label: 'Laptop',
        userHandle: `handle-${alice}`,
        publicKey: new Uint8Array([1, 2, 3]),
        counter: 1,
        transports: ['internal'],
        deviceType: 'singleDevice',
        backedUp: false,
        aaguid: '00000000-0000-0000-0000-000000000000',
        rpId: 'localhost',
      });
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${base}/`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/interaction\//);
      await page.getByLabel('E-mail address').fill('alice@acme.test');
      await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
      await page.waitForURL(/\/login\/ott\?sent=1/);
      await page.goto(await sink.nextLink(0));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${base}/`);
      await expect.poll(() => page.getByLabel('Passkey name').inputValue(), { timeout: 10_000 }).toBe('Laptop');

      // The sign-in is seconds old, so the API would let the removal through: the first answer is replaced by the
      // challenge a sign-in older than 5 minutes gets, exactly as the API words it.
      const removals: string[] = [];
      await page.route(`${base}/graphql`, async (route) => {
        const body = route.request().postData() ?? '';
        if (!body.includes('removePasskey')) return route.continue();
        removals.push(body);
        if (removals.length > 1) return route.continue();
        return route.fulfill({
          status: 401,
          headers: { 'content-type': 'application/graphql-response+json; charset=utf-8', 'www-authenticate': CHALLENGE_FRESH },
          body: JSON.stringify({
            data: { removePasskey: null },
            errors: [
              {
                message: 'More recent authentication is required.',
                path: ['removePasskey'],
                extensions: { code: 'INSUFFICIENT_USER_AUTHENTICATION', max_age: 300 },
              },
            ],
          }),
        });
      });
      const authorization = page.waitForRequest((request) => request.url().startsWith(`${base}/oidc/auth?`));
      await page.getByRole('button', { name: 'Remove' }).click();
      const asked = new URL((await authorization).url()).searchParams;
      expect(asked.get('max_age')).toBe('300');
      expect(asked.get('code_challenge_method')).toBe('S256');
      expect(asked.has('acr_values')).toBe(false);

      // The provider session is fresh enough: straight back to the callback, then the remembered removal, once.
      await page.waitForURL(`${base}/`, { timeout: 15_000 });
      await expect.poll(() => page.locator('#passkey-status').textContent(), { timeout: 10_000 }).toBe('Passkey removed.');
      expect(removals).toHaveLength(2);
      expect(JSON.parse(removals[1]!)).toEqual(JSON.parse(removals[0]!));
      expect(await local.database.db.select({ id: passkeys.id }).from(passkeys)).toEqual([]);
      expect(await page.evaluate(() => sessionStorage.getItem('demo.pending'))).toBeNull();
      await context.close();
    });
  },
);
