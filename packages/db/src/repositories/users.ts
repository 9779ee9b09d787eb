import { eq, getTableColumns, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../client.js';
import { reusableRead, reusableReadByKeys } from '../prepared.js';
import { memberships, users, type Role, type UserRow } from '../schema/index.js';
import { columnDecoder } from '../timestamps.js';

const userById = reusableRead<{ id: string }, UserRow[]>('user_by_id', (db) =>
  db
    .select()
    .from(users)
    .where(eq(users.id, sql.placeholder('id')))
    .limit(1),
);

/** One account by id (the id must be a UUID: the caller checks it). */
export async function findUserById(db: Database, id: string): Promise<UserRow | null> {
  const [user] = await userById(db, { id });
  return user ?? null;
}

/**
 * The id of the account with this e-mail address, as given (the caller normalises it), whatever its state: a
 * suspended account's id too. For operators' commands and tests; a sign-in asks `findActiveUserIdByEmail`
 * (@latchkey/auth), which answers null for a suspended account.
 */
export async function findAnyUserIdByEmail(db: Database, email: string): Promise<string | null> {
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, email)).limit(1);
  return user?.id ?? null;
}

/** Self sign-up: an account with this e-mail address (unverified) unless one exists; an existing one is left as it is. */
export async function addUserIfAbsent(db: Database, email: string): Promise<void> {
  await db.insert(users).values({ email }).onConflictDoNothing();
}

/** What the policies read of an account at decision time, with its role in every organization it belongs to. */
export interface UserWithRoles {
  id: string;
  superAdmin: boolean;
  suspended: boolean;
  emailVerified: boolean;
  roles: { organizationId: string; role: Role }[];
  /** the account's whole row as the same statement read it (what the caller's own `me` answers) */
  account: UserRow;
}

// Read on every request that has a caller (the policies' subject), so built once. It reads the whole account row,
// a few columns more than the policies need: a request that also shows the caller's account then reads it once.
const userWithRoles = reusableRead<{ id: string }, { user: UserRow; organizationId: string | null; role: Role | null }[]>(
  'user_with_roles',
  (db) =>
    db
      .select({ user: users, organizationId: memberships.organizationId, role: memberships.role })
      .from(users)
      .leftJoin(memberships, eq(memberships.userId, users.id))
      .where(eq(users.id, sql.placeholder('id'))),
);

const withRoles = (user: UserRow, roles: UserWithRoles['roles']): UserWithRoles => ({
  id: user.id,
  superAdmin: user.superAdmin,
  suspended: user.suspended,
  emailVerified: user.emailVerified,
  roles,
  account: user,
});

/** An account's volatile attributes and roles in one statement; null when there is no such account. */
export async function findUserWithRoles(db: Database, id: string): Promise<UserWithRoles | null> {
  const rows = await userWithRoles(db, { id });
  const [first] = rows;
  if (!first) return null;
  const roles: UserWithRoles['roles'] = [];
  for (const row of rows) if (row.organizationId && row.role) roles.push({ organizationId: row.organizationId, role: row.role });
  return withRoles(first.user, roles);
}

// An account inside a statement about something else (a listed document's owner, the caller beside a page): one JSON
// array of its columns, in this order, each decoded by its own column as a select's would be.
const userColumns = Object.entries(getTableColumns(users));
const userColumnDecoders = userColumns.map(([key, column]) => [key, columnDecoder(column)] as const);

/** The user's columns, in the order `userFromJsonArray` reads them, for `json_build_array(...)`. */
export const userColumnsForJson: SQL = sql.join(
  userColumns.map(([, column]) => column),
  sql`, `,
);

/** A user row from a JSON array that starts with `userColumnsForJson`'s values (what follows them is the caller's). */
export function userFromJsonArray(json: readonly unknown[]): UserRow {
  const user: Record<string, unknown> = {};
  for (let index = 0; index < userColumnDecoders.length; index++) {
    const [key, decode] = userColumnDecoders[index]!;
    user[key] = json[index] === null ? null : decode(json[index]);
  }
  return user as UserRow;
}

/** How many values of such an array are the user's columns. */
export const USER_COLUMN_COUNT = userColumns.length;

/**
 * The account with this id and its roles as one JSON text (its columns, then its `[organization id, role]` pairs), or
 * null: what `findUserWithRoles` reads, as a column of a statement that reads something else beside it (the caller
 * with a page of documents, one round trip instead of two; `decodeUserWithRoles` reads it).
 */
export const userWithRolesAsJson = (id: SQL): SQL<string | null> =>
  sql<
    string | null
  >`(select json_build_array(${userColumnsForJson}, (select coalesce(json_agg(json_build_array(${memberships.organizationId}, ${memberships.role})), '[]'::json) from ${memberships} where ${memberships.userId} = ${users.id})) from ${users} where ${users.id} = ${id})::text`;

/** The account and roles `userWithRolesAsJson` read (null: no such account). */
export function decodeUserWithRoles(text: string | null): UserWithRoles | null {
  if (text === null) return null;
  const json = JSON.parse(text) as unknown[];
  const pairs = json[USER_COLUMN_COUNT] as [string, Role][];
  return withRoles(
    userFromJsonArray(json),
    pairs.map(([organizationId, role]) => ({ organizationId, role })),
  );
}

// A page's owners, one batch per request (one owner, `= $1`; several, the ids as one array).
const usersWithOrganizationIds = reusableReadByKeys<{ user: UserRow; organizationIds: string[] }[]>(
  'users_with_organization_ids',
  'uuid',
  (db, matches) =>
    db
      .select({
        user: users,
        organizationIds: sql<
          string[]
        >`coalesce(array_agg(${memberships.organizationId}::text) filter (where ${memberships.organizationId} is not null), '{}')`,
      })
      .from(users)
      .leftJoin(memberships, eq(memberships.userId, users.id))
      .where(matches(users.id))
      .groupBy(users.id),
);

/** Accounts by id, each with the ids of its organizations, in one statement (a batch of a request's loader). */
export async function listUsersWithOrganizationIds(
  db: Database,
  ids: readonly string[],
): Promise<{ user: UserRow; organizationIds: string[] }[]> {
  return usersWithOrganizationIds(db, ids);
}
