import { onPostgres } from '../testing/index.js';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../client.js';
import { seedDemoData } from '../seed.js';
import { openOwnDatabase } from '../testing/own-database.js';
import { statementsDuring } from '../testing/statements.js';
import { listVisibleDocuments, type DocumentListQuery } from './document-lists.js';
import { listMembershipsOfUsers } from './memberships.js';
import { findOrganizationBySlug } from './organizations.js';

// PostgreSQL plans a prepared statement again at each execution (a custom plan) unless its generic plan looks about as
// cheap. With `limit $n`, the generic plan assumes a tenth of the matching rows and never does, at volume; written in
// as a constant, the limit is estimated alike in both, and the generic plan is kept. PGlite's driver prepares nothing.
describe.runIf(onPostgres('the PostgreSQL-only tests'))(
  "The request paths' statements keep their prepared plans, and lists across organizations use an index (PostgreSQL only)",
  () => {
    let database: DatabaseHandle;
    let close: () => Promise<void>;
    let client: postgres.Sql;
    let acme: string;

    beforeAll(async () => {
      const own = await openOwnDatabase('document_list_plans');
      ({ database, close } = own);
      await seedDemoData(database);
      acme = (await findOrganizationBySlug(database.db, 'acme'))!.id;
      // Volume, as in the bench: 3,000 documents in acme, so that the plans' estimated costs differ as they do in production.
      await database.db.execute(sql`
      insert into documents (organization_id, owner_id, title, body, status)
      select ${acme}::uuid, (select owner_id from documents where organization_id = ${acme}::uuid limit 1),
             'Volume ' || n, 'body', 'DRAFT'
      from generate_series(1, 3000) as n`);
      await database.db.execute(sql`analyze documents`);
      client = postgres(own.url!, { max: 1, onnotice: () => undefined });
    });
    afterAll(async () => {
      await client?.end();
      await close?.();
    });

    const page = (first: number): DocumentListQuery => ({
      visibility: { everything: false, anyStatusIn: [acme], publishedIn: [], now: new Date() },
      organizationSlug: 'acme',
      statuses: null,
      after: null,
      limit: first + 1,
      withOwners: true,
    });

    /** The plans PostgreSQL made for `text` after running it prepared ten times on one connection. */
    async function plansAfterTenRuns(text: string, values: unknown[]) {
      for (let run = 0; run < 10; run++) await client.unsafe(text, values as never[], { prepare: true });
      const [plans] = await client<{ generic: number; custom: number }[]>`
      select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where statement = ${text}`;
      return plans!;
    }

    it('first: 20 is read with "limit 21" in its text, and PostgreSQL plans it generically after five runs', async () => {
      const { statements, result } = await statementsDuring(() => listVisibleDocuments(database.db, page(20)));
      expect(result).toHaveLength(21);
      expect(statements[0]).toMatch(/limit 21\)/);
      const plans = await plansAfterTenRuns(statements[0]!, [acme, 'acme']);
      expect(plans.generic).toBeGreaterThanOrEqual(5);
    });

    it('first: 7, not a common size, keeps its placeholder, and is planned again at every run (why the constant pays)', async () => {
      const { statements, result } = await statementsDuring(() => listVisibleDocuments(database.db, page(7)));
      expect(result).toHaveLength(8);
      expect(statements[0]).toMatch(/limit \$3\)/);
      const plans = await plansAfterTenRuns(statements[0]!, [acme, 'acme', 8]);
      expect(plans).toEqual({ generic: 0, custom: 10 });
    });

    it("a list across organizations (a super admin's) walks documents_created_idx backwards instead of sorting every document", async () => {
      const everything: DocumentListQuery = { ...page(20), visibility: { everything: true }, organizationSlug: null };
      const { statements, result } = await statementsDuring(() => listVisibleDocuments(database.db, everything));
      expect(result).toHaveLength(21);
      const plan = (await client.unsafe(`explain ${statements[0]!}`)).map((line) => String(Object.values(line)[0])).join('\n');
      expect(plan).toMatch(/Index Scan Backward using documents_created_idx/);
      expect(plan).not.toMatch(/Sort/);
    });

    it("a list filtered by status builds its rows' JSON above its limit, over the rows kept, not for every row its sort looks at", async () => {
      const published: DocumentListQuery = { ...page(20), statuses: ['PUBLISHED'] };
      const { statements, result } = await statementsDuring(() => listVisibleDocuments(database.db, published));
      expect(result.length).toBeGreaterThan(0);
      expect(statements[0]).toMatch(/"organization_id" in \(\$1\).*"slug" = \$2.*any\(\$3::text\[\]\)/s);
      const plan = (await client.unsafe(`explain (verbose, costs off) ${statements[0]!}`, [acme, 'acme', ['PUBLISHED']])).map((line) =>
        String(Object.values(line)[0]),
      );
      const limit = plan.findIndex((line) => /->\s+Limit/.test(line));
      expect(limit).toBeGreaterThan(0);
      // The Limit's subtree: the lines after it indented deeper than it (the statement's subplans follow, less indented).
      const depth = (line: string) => line.search(/\S/);
      const end = plan.findIndex((line, index) => index > limit && depth(line) <= depth(plan[limit]!));
      const underLimit = plan.slice(limit, end < 0 ? undefined : end).join('\n');
      // Not vacuous: the rows are built into JSON above the limit, and the list is planned with a sort of its candidates.
      expect(plan.slice(0, limit).join('\n')).toMatch(/json_agg\(json_build_array\(documents\.id/);
      expect(underLimit).toMatch(/Sort Key: documents\.created_at DESC/);
      expect(underLimit).not.toMatch(/json_build_array/);
    });

    it("one user's memberships are read with '= $1' and keep their generic plan; '= any($1)' of one would be planned at every run", async () => {
      const [{ ownerId }] = (await database.db.execute(sql`select owner_id as "ownerId" from documents limit 1`)) as unknown as [
        { ownerId: string },
      ];
      const one = await statementsDuring(() => listMembershipsOfUsers(database.db, [ownerId]));
      expect(one.result.length).toBeGreaterThan(0);
      expect(one.statements[0]).toMatch(/"user_id" = \$1/);
      expect(await plansAfterTenRuns(one.statements[0]!, [ownerId])).toMatchObject({ generic: 5 });
      const several = await statementsDuring(() => listMembershipsOfUsers(database.db, [ownerId, ownerId]));
      expect(several.statements[0]).toMatch(/= any\(\$1::uuid\[\]\)/);
      expect(await plansAfterTenRuns(several.statements[0]!, [[ownerId]])).toEqual({ generic: 0, custom: 10 });
    });
  },
);
