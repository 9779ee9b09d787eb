import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestTarget, serverUrl } from '../tests/helpers.js';
import { createDatabase, type DatabaseHandle } from './client.js';
import { runMigrations } from './migrate.js';
import { documents, memberships, organizations, users } from './schema/index.js';
import { isEmpty, seedDemoData } from './seed.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function freshDatabase(): Promise<DatabaseHandle> {
  const target = await createTestTarget({ migrated: true });
  cleanups.push(() => target.cleanup());
  const handle = await createDatabase({ url: target.url, dataDir: target.dataDir });
  cleanups.push(() => handle.close());
  await runMigrations(handle);
  return handle;
}

describe(`demo data (docs/endpoints.md) (${serverUrl ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('seeds the organizations, users, roles and documents once; a second run changes nothing', async () => {
    const database = await freshDatabase();
    expect(await isEmpty(database)).toBe(true);
    expect(await seedDemoData(database)).toEqual({ organizations: 2, users: 5, documents: 7 });
    expect(await isEmpty(database)).toBe(false);
    expect(await seedDemoData(database)).toEqual({ organizations: 0, users: 0, documents: 0 });

    const { db } = database;
    const orgs = await db.select({ slug: organizations.slug, plan: organizations.plan }).from(organizations).orderBy(organizations.slug);
    expect(orgs).toEqual([
      { slug: 'acme', plan: 'PRO' },
      { slug: 'globex', plan: 'FREE' },
    ]);

    const roles = await db
      .select({ email: users.email, role: memberships.role, slug: organizations.slug, verified: users.emailVerified })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
      .orderBy(users.email);
    expect(roles).toEqual([
      { email: 'alice@acme.test', role: 'OWNER', slug: 'acme', verified: true },
      { email: 'bob@acme.test', role: 'VIEWER', slug: 'acme', verified: true },
      { email: 'carol@globex.test', role: 'ADMIN', slug: 'globex', verified: true },
      { email: 'erin@acme.test', role: 'EDITOR', slug: 'acme', verified: false },
    ]);
    const [root] = await db.select().from(users).where(eq(users.email, 'root@latchkey.test'));
    expect(root?.superAdmin).toBe(true);

    const held = await db.select({ title: documents.title }).from(documents).where(eq(documents.legalHold, true));
    expect(held).toEqual([{ title: 'Litigation memo' }]);
  });
});
