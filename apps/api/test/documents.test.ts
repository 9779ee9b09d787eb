import { randomUUID } from 'node:crypto';
import { documents, seedDemoData, users } from '@latchkey/db';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postGraphQL, startTestService, type TestService } from './support/service.js';
import { COST_REPORTED } from './support/cost.js';

const DOCUMENT = `query ($id: ID!) {
  document(id: $id) {
    title status organization { slug }
    internalNotes
    viewerCan { update publish archive delete setLegalHold }
  }
}`;

let service: TestService;
const ids = new Map<string, string>();
const idOf = async (email: string) => (await service.database.db.select({ id: users.id }).from(users).where(eq(users.email, email)))[0]!.id;

beforeAll(async () => {
  service = await startTestService();
  await seedDemoData(service.database);
  for (const row of await service.database.db.select({ id: documents.id, title: documents.title }).from(documents))
    ids.set(row.title, row.id);
});
afterAll(() => service?.stop());

async function ask(email: string, title: string | null, id = title ? ids.get(title)! : randomUUID()) {
  return postGraphQL(service.graphqlUrl, { query: DOCUMENT, variables: { id } }, { token: await service.token(await idOf(email)) });
}

const NOT_FOUND = {
  data: { document: null },
  errors: [
    {
      message: 'The requested record was not found.',
      locations: [{ line: 2, column: 3 }],
      path: ['document'],
      extensions: { code: 'NOT_FOUND' },
    },
  ],
  extensions: COST_REPORTED,
};

describe('document(id): record-level rules in the service layer (spec Authorization 2, 6, 10, 11, 12)', () => {
  it('the OWNER sees everything, and viewerCan says what she may do', async () => {
    const res = await ask('alice@acme.test', 'Quarterly plan');
    expect(res.json).toEqual({
      data: {
        document: {
          title: 'Quarterly plan',
          status: 'PUBLISHED',
          organization: { slug: 'acme' },
          internalNotes: 'Numbers not final.',
          viewerCan: { update: true, publish: true, archive: true, delete: true, setLegalHold: true },
        },
      },
      extensions: COST_REPORTED,
    });
  });

  it("rule 6: another tenant's document answers exactly like a missing id", async () => {
    expect((await ask('carol@globex.test', 'Quarterly plan')).json).toEqual(NOT_FOUND);
    expect((await ask('carol@globex.test', null)).json).toEqual(NOT_FOUND);
  });

  it('rule 11: VIEWERs cannot see drafts or embargoed documents (as if missing); EDITORs can', async () => {
    expect((await ask('bob@acme.test', 'Draft roadmap')).json).toEqual(NOT_FOUND);
    expect((await ask('bob@acme.test', 'Launch announcement')).json).toEqual(NOT_FOUND);
    expect((await ask('erin@acme.test', 'Launch announcement')).json.data.document.title).toBe('Launch announcement');
  });

  it('rule 12: a VIEWER gets internalNotes null with FORBIDDEN at its path, the rest of the document intact', async () => {
    const res = await ask('bob@acme.test', 'Quarterly plan');
    expect(res.status).toBe(200);
    expect(res.json.data.document).toMatchObject({ title: 'Quarterly plan', internalNotes: null });
    expect(res.json.errors).toEqual([
      {
        message: 'You are not allowed to do this.',
        locations: [{ line: 4, column: 5 }],
        path: ['document', 'internalNotes'],
        extensions: { code: 'FORBIDDEN' },
      },
    ]);
    expect(res.json.data.document.viewerCan).toEqual({ update: false, publish: false, archive: false, delete: false, setLegalHold: false });
  });

  it('rules 8 and 11 in viewerCan: legal hold blocks delete even for the super-admin; an unverified EDITOR cannot publish', async () => {
    expect((await ask('alice@acme.test', 'Litigation memo')).json.data.document.viewerCan.delete).toBe(false);
    expect((await ask('root@latchkey.test', 'Litigation memo')).json.data.document.viewerCan).toEqual({
      update: true,
      publish: true,
      archive: true,
      delete: false,
      setLegalHold: true,
    });
    expect((await ask('erin@acme.test', 'Draft roadmap')).json.data.document.viewerCan).toEqual({
      update: true,
      publish: false,
      archive: true,
      delete: true,
      setLegalHold: false,
    });
  });

  it('a FREE organization cannot publish, even for its ADMIN', async () => {
    expect((await ask('carol@globex.test', 'Globex handbook')).json.data.document.viewerCan.publish).toBe(false);
  });

  it('a malformed id is BAD_USER_INPUT, never a 5xx', async () => {
    for (const id of ['42', 'not-a-uuid', "' or 1=1 --", 'x'.repeat(5000)]) {
      const res = await ask('alice@acme.test', null, id);
      expect(res.status).toBe(200);
      expect(res.json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    }
  });
});
