import { inArray } from 'drizzle-orm';
import type { DatabaseHandle } from './client.js';
import { documents, memberships, organizations, users, type DocumentStatus, type Plan, type Role } from './schema/index.js';

/** The demo data (docs/endpoints.md, "Demo data"). */
const ORGANIZATIONS: { slug: string; name: string; plan: Plan; billingEmail: string }[] = [
  { slug: 'acme', name: 'Acme Corporation', plan: 'PRO', billingEmail: 'billing@acme.test' },
  { slug: 'globex', name: 'Globex', plan: 'FREE', billingEmail: 'accounts@globex.test' },
];

const USERS: { email: string; displayName: string; emailVerified: boolean; superAdmin?: boolean; member?: [string, Role] }[] = [
  { email: 'alice@acme.test', displayName: 'Alice', emailVerified: true, member: ['acme', 'OWNER'] },
  { email: 'bob@acme.test', displayName: 'Bob', emailVerified: true, member: ['acme', 'VIEWER'] },
  { email: 'erin@acme.test', displayName: 'Erin', emailVerified: false, member: ['acme', 'EDITOR'] },
  { email: 'carol@globex.test', displayName: 'Carol', emailVerified: true, member: ['globex', 'ADMIN'] },
  { email: 'root@latchkey.test', displayName: 'Root', emailVerified: true, superAdmin: true },
];

interface DemoDocument {
  org: string;
  owner: string;
  title: string;
  body: string;
  status: DocumentStatus;
  legalHold?: boolean;
  embargoUntil?: Date;
  internalNotes?: string;
}

const DOCUMENTS: DemoDocument[] = [
  {
    org: 'acme',
    owner: 'alice@acme.test',
    title: 'Quarterly plan',
    body: 'Targets for the quarter.',
    status: 'PUBLISHED',
    internalNotes: 'Numbers not final.',
  },
  { org: 'acme', owner: 'erin@acme.test', title: 'Draft roadmap', body: 'Ideas for next year.', status: 'DRAFT' },
  {
    org: 'acme',
    owner: 'alice@acme.test',
    title: 'Litigation memo',
    body: 'Preserve all records.',
    status: 'PUBLISHED',
    legalHold: true,
    internalNotes: 'Counsel: keep.',
  },
  {
    org: 'acme',
    owner: 'alice@acme.test',
    title: 'Launch announcement',
    body: 'Coming soon.',
    status: 'PUBLISHED',
    embargoUntil: new Date('2099-01-01T00:00:00Z'),
  },
  { org: 'acme', owner: 'erin@acme.test', title: 'Old pricing', body: 'Superseded.', status: 'ARCHIVED' },
  { org: 'globex', owner: 'carol@globex.test', title: 'Globex handbook', body: 'How we work.', status: 'PUBLISHED' },
  {
    org: 'globex',
    owner: 'carol@globex.test',
    title: 'Globex merger draft',
    body: 'Confidential.',
    status: 'DRAFT',
    internalNotes: 'Board only.',
  },
];

export interface SeedResult {
  organizations: number;
  users: number;
  documents: number;
}

/**
 * Inserts the demo data in one transaction. Idempotent: rows that exist (by slug, e-mail, membership,
 * organization + title) are left as they are, so running it twice changes nothing.
 */
export async function seedDemoData(handle: DatabaseHandle): Promise<SeedResult> {
  return handle.db.transaction(async (tx) => {
    const orgs = await tx.insert(organizations).values(ORGANIZATIONS).onConflictDoNothing().returning({ id: organizations.id });
    const people = await tx
      .insert(users)
      .values(
        USERS.map(({ email, displayName, emailVerified, superAdmin }) => ({
          email,
          displayName,
          emailVerified,
          superAdmin: superAdmin ?? false,
        })),
      )
      .onConflictDoNothing()
      .returning({ id: users.id });

    const orgIds = new Map(
      (
        await tx
          .select({ id: organizations.id, slug: organizations.slug })
          .from(organizations)
          .where(
            inArray(
              organizations.slug,
              ORGANIZATIONS.map((o) => o.slug),
            ),
          )
      ).map((o) => [o.slug, o.id]),
    );
    const userIds = new Map(
      (
        await tx
          .select({ id: users.id, email: users.email })
          .from(users)
          .where(
            inArray(
              users.email,
              USERS.map((u) => u.email),
            ),
          )
      ).map((u) => [u.email, u.id]),
    );

    const members = USERS.filter((user) => user.member).map(({ email, member }) => ({
      organizationId: orgIds.get(member![0])!,
      userId: userIds.get(email)!,
      role: member![1],
    }));
    await tx.insert(memberships).values(members).onConflictDoNothing();

    const docs = await tx
      .insert(documents)
      .values(DOCUMENTS.map(({ org, owner, ...fields }) => ({ ...fields, organizationId: orgIds.get(org)!, ownerId: userIds.get(owner)! })))
      .onConflictDoNothing()
      .returning({ id: documents.id });

    return { organizations: orgs.length, users: people.length, documents: docs.length };
  });
}

/** True when the database holds no users yet (a fresh development database). */
export async function isEmpty(handle: DatabaseHandle): Promise<boolean> {
  const [row] = await handle.db.select({ id: users.id }).from(users).limit(1);
  return row === undefined;
}
