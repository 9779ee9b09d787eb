import {
  listOrganizationIdsOfUsers,
  listOrganizationsByIds,
  listUsersWithOrganizationIds,
  listVisibleDocumentsTogether,
  type Database,
  type DocumentListQuery,
  type ListedDocument,
  type OrganizationRow,
  type UserRow,
} from '@latchkey/db';
import DataLoader from 'dataloader';

/**
 * A request's batched lookup of one kind of row: every `load` of a key it does not hold yet, made in the same
 * tick, becomes one SQL statement. A key it holds (primed by a statement that read the row anyway, or loaded
 * earlier in the request) is answered at once, without a promise: a page's resolvers then run synchronously
 * for every row whose data the page's own statements brought, which spares the executor a promise per field.
 */
export interface RowLoader<Value> {
  load(key: string): Value | Promise<Value>;
  prime(key: string, value: Value): void;
}

function rowLoader<Value>(batch: (keys: readonly string[]) => Promise<Value[]>): RowLoader<Value> {
  const held = new Map<string, Value>();
  const loader = new DataLoader<string, Value>(async (keys) => {
    const values = await batch(keys);
    for (const [index, key] of keys.entries()) held.set(key, values[index]!);
    return values;
  });
  return {
    load: (key) => (held.has(key) ? held.get(key)! : loader.load(key)),
    prime: (key, value) => void held.set(key, value),
  };
}

/**
 * Batched lookups for one request: a page of documents with owners and organizations costs the same number
 * of statements whatever its size.
 */
export interface RequestLoaders {
  organization: RowLoader<OrganizationRow | null>;
  user: RowLoader<UserRow | null>;
  /** the ids of the organizations a user belongs to */
  organizationIdsOf: RowLoader<readonly string[]>;
  /**
   * Lists of visible documents: the lists a request asks for in the same tick (a dashboard's six) are read in one
   * statement. Never cached: each list is read when asked.
   */
  documentList: { load(query: DocumentListQuery): Promise<ListedDocument[]> };
}

/** At most this many lists in one statement. */
const MAX_LISTS_PER_STATEMENT = 8;

function byId<Row extends { id: string }>(rows: readonly Row[], ids: readonly string[]): (Row | null)[] {
  const found = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => found.get(id) ?? null);
}

function createRequestLoaders(db: Database): RequestLoaders {
  const organizationIdsOf = rowLoader<readonly string[]>(async (userIds) => {
    const rows = await listOrganizationIdsOfUsers(db, userIds);
    const byUser = new Map<string, string[]>();
    for (const row of rows) (byUser.get(row.userId) ?? byUser.set(row.userId, []).get(row.userId)!).push(row.organizationId);
    return userIds.map((id) => byUser.get(id) ?? []);
  });
  return {
    organization: rowLoader(async (ids) => byId(await listOrganizationsByIds(db, ids), ids)),
    // Users come with the ids of their organizations (one statement): the e-mail rule needs them for every owner.
    user: rowLoader(async (ids) => {
      const rows = await listUsersWithOrganizationIds(db, ids);
      for (const { user, organizationIds } of rows) organizationIdsOf.prime(user.id, organizationIds);
      return byId(
        rows.map((row) => row.user),
        ids,
      );
    }),
    organizationIdsOf,
    documentList: new DataLoader<DocumentListQuery, ListedDocument[]>((queries) => listVisibleDocumentsTogether(db, queries), {
      cache: false,
      maxBatchSize: MAX_LISTS_PER_STATEMENT,
    }),
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
