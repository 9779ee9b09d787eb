import {
  listOrganizationIdsOfUsers,
  listOrganizationsByIds,
  listUsersWithOrganizationIds,
  type Database,
  type OrganizationRow,
  type UserRow,
} from '@latchkey/db';
import DataLoader from 'dataloader';

/**
 * Batched lookups for one request: every `load` made in the same tick becomes one SQL statement, so a page
 * of documents with owners and organizations costs the same number of statements whatever its size.
 */
export interface RequestLoaders {
  organization: DataLoader<string, OrganizationRow | null>;
  user: DataLoader<string, UserRow | null>;
  /** the ids of the organizations a user belongs to */
  organizationIdsOf: DataLoader<string, readonly string[]>;
}

function byId<Row extends { id: string }>(rows: readonly Row[], ids: readonly string[]): (Row | null)[] {
  const found = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => found.get(id) ?? null);
}

function createRequestLoaders(db: Database): RequestLoaders {
  const organizationIdsOf: RequestLoaders['organizationIdsOf'] = new DataLoader(async (userIds) => {
    const rows = await listOrganizationIdsOfUsers(db, userIds);
    const byUser = new Map<string, string[]>();
    for (const row of rows) (byUser.get(row.userId) ?? byUser.set(row.userId, []).get(row.userId)!).push(row.organizationId);
    return userIds.map((id) => byUser.get(id) ?? []);
  });
  return {
    organization: new DataLoader(async (ids) => byId(await listOrganizationsByIds(db, ids), ids)),
    // Users come with the ids of their organizations (one statement): the e-mail rule needs them for every owner.
    user: new DataLoader(async (ids) => {
      const rows = await listUsersWithOrganizationIds(db, ids);
      for (const { user, organizationIds } of rows) organizationIdsOf.prime(user.id, organizationIds);
      return byId(
        rows.map((row) => row.user),
        ids,
      );
    }),
    organizationIdsOf,
  };
}

/**
 * One set of loaders per request (keyed by the request's context object), created on first use with the
 * request's own view of the database (its deadline).
 */
export function createLoaderFactory() {
  const byRequest = new WeakMap<object, RequestLoaders>();
  return (request: object, db: Database): RequestLoaders => {
    let loaders = byRequest.get(request);
    if (!loaders) byRequest.set(request, (loaders = createRequestLoaders(db)));
    return loaders;
  };
}
export type LoaderFactory = ReturnType<typeof createLoaderFactory>;
