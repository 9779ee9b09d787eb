import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../client.js';
import { seedDemoData } from '../seed.js';
import { openOwnDatabase } from '../testing/own-database.js';
import { statementsDuring } from '../testing/statements.js';
import { listVisibleDocuments, listVisibleDocumentsTogether, type DocumentListQuery } from './document-lists.js';
import { findOrganizationBySlug } from './organizations.js';

let database: DatabaseHandle;
let close: () => Promise<void>;
let acme: string;
let globex: string;

beforeAll(async () => {
  ({ database, close } = await openOwnDatabase('document_lists'));
  await seedDemoData(database);
  acme = (await findOrganizationBySlug(database.db, 'acme'))!.id;
  globex = (await findOrganizationBySlug(database.db, 'globex'))!.id;
});
afterAll(() => close?.());

const list = (query: Partial<DocumentListQuery>): DocumentListQuery => ({
  visibility: { everything: true },
  organizationSlug: null,
  statuses: null,
  after: null,
  limit: 100,
  ...query,
});

describe('Authorization 15: several lists of one request are read in one statement, each exactly as on its own', () => {
  it('lists of different visibility, filters, pages and limits, with and without owners, in one statement', async () => {
    const now = new Date();
    const [newest] = await listVisibleDocuments(database.db, list({ limit: 1 }));
    const queries = [
      list({ visibility: { everything: false, anyStatusIn: [globex], publishedIn: [acme], now }, withOwners: true }),
      list({ organizationSlug: 'acme', statuses: ['DRAFT'] }),
      list({ statuses: [] }),
      list({ after: { createdAt: newest!.position, id: newest!.document.id }, limit: 3, withOwners: true }),
      list({ visibility: { everything: false, anyStatusIn: [], publishedIn: [], now } }),
      list({
        visibility: { everything: false, anyStatusIn: [acme, globex], publishedIn: [], now },
        statuses: ['PUBLISHED', 'ARCHIVED'],
        limit: 2,
      }),
    ];
    const together = await statementsDuring(() => listVisibleDocumentsTogether(database.db, queries));
    expect(together.statements).toHaveLength(1);
    expect(together.result).toHaveLength(queries.length);
    for (const [index, query] of queries.entries()) {
      expect(together.result[index], `list ${index}`).toEqual(await listVisibleDocuments(database.db, query));
    }
    // Not vacuous: the lists differ, some are empty, some are cut by their limit.
    expect(together.result.map((rows) => rows.length)).toEqual([4, 1, 0, 3, 0, 2]);
  });

  it('the same lists in another order answer in that order; one list alone is its own statement', async () => {
    const queries = [list({ organizationSlug: 'globex' }), list({ organizationSlug: 'acme', withOwners: true })];
    const [globexRows, acmeRows] = await listVisibleDocumentsTogether(database.db, queries);
    const [acmeAgain, globexAgain] = await listVisibleDocumentsTogether(database.db, [...queries].reverse());
    expect(globexRows!.every((row) => row.organization.slug === 'globex')).toBe(true);
    expect(acmeRows!.every((row) => row.organization.slug === 'acme' && row.owner)).toBe(true);
    expect(acmeAgain).toEqual(acmeRows);
    expect(globexAgain).toEqual(globexRows);
    const alone = await statementsDuring(() => listVisibleDocumentsTogether(database.db, [queries[0]!]));
    expect(alone.result).toEqual([globexRows]);
    expect(alone.statements).toHaveLength(1);
    expect(alone.statements[0]).not.toMatch(/union all/i);
  });

  it('a list read without bodies has no body at all, and the same rows otherwise; a union carries bodies when one list reads them', async () => {
    const withBodies = await listVisibleDocuments(database.db, list({ organizationSlug: 'acme' }));
    const without = await statementsDuring(() => listVisibleDocuments(database.db, list({ organizationSlug: 'acme', withBody: false })));
    expect(withBodies.length).toBeGreaterThan(1);
    expect(withBodies.every(({ document }) => typeof document.body === 'string')).toBe(true);
    expect(without.statements[0]).not.toMatch(/"body"/);
    expect(without.result.every(({ document }) => !('body' in document))).toBe(true);
    const bodiless = ({ document: { body: _body, ...document }, ...row }: (typeof withBodies)[number]) => ({ ...row, document });
    expect(without.result).toEqual(withBodies.map(bodiless));

    // A union's selects share their columns: the list without bodies carries them when its neighbour reads them.
    const [globexRows, acmeRows] = await listVisibleDocumentsTogether(database.db, [
      list({ organizationSlug: 'globex', withBody: false }),
      list({ organizationSlug: 'acme' }),
    ]);
    expect(acmeRows).toEqual(withBodies);
    expect(globexRows!.map(bodiless)).toEqual(
      (await listVisibleDocuments(database.db, list({ organizationSlug: 'globex', withBody: false }))).map(bodiless),
    );
    const bothWithout = await statementsDuring(() =>
      listVisibleDocumentsTogether(database.db, [
        list({ organizationSlug: 'globex', withBody: false }),
        list({ organizationSlug: 'acme', withBody: false }),
      ]),
    );
    expect(bothWithout.statements).toHaveLength(1);
    expect(bothWithout.statements[0]).not.toMatch(/"body"/);
    expect(bothWithout.result[1]).toEqual(without.result);
  });
});
