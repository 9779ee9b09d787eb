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

/**
 * When a request's batch of rows may go: at once (DataLoader's own timing, after the current promise jobs), or, while
 * lists of documents are in flight, after they are answered and their pages primed the loaders (a `setImmediate`
 * runs after every promise job the answer set off). A dashboard's pinned document would otherwise load its owner in
 * a statement of its own just before the lists brought that owner anyway: how many statements it cost depended on
 * which answer came first.
 */
type BatchSchedule = (dispatch: () => void) => void;

function rowLoader<Value>(batch: (keys: readonly string[]) => Promise<Value[]>, schedule: BatchSchedule): RowLoader<Value> {
  const held = new Map<string, Value>();
  const loader = new DataLoader<string, Value>(
    async (keys) => {
      // Rows primed while the batch waited are answered from what is held; only the rest is read.
      const missing = keys.filter((key) => !held.has(key));
      if (missing.length > 0) {
        const values = await batch(missing);
        for (const [index, key] of missing.entries()) held.set(key, values[index]!);
      }
      return keys.map((key) => held.get(key)!);
    },
    { batchScheduleFn: schedule },
  );
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
  const listsInFlight = new Set<Promise<unknown>>();
  const schedule: BatchSchedule = (dispatch) => {
    if (listsInFlight.size === 0) return void Promise.resolve().then(() => process.nextTick(dispatch));
    void Promise.allSettled([...listsInFlight]).then(() => setImmediate(dispatch));
  };
  const organizationIdsOf = rowLoader<readonly string[]>(async (userIds) => {
    const rows = await listOrganizationIdsOfUsers(db, userIds);
    const byUser = new Map<string, string[]>();
    for (const row of rows) (byUser.get(row.userId) ?? byUser.set(row.userId, []).get(row.userId)!).push(row.organizationId);
    return userIds.map((id) => byUser.get(id) ?? []);
  }, schedule);
  const lists = new DataLoader<DocumentListQuery, ListedDocument[]>((queries) => listVisibleDocumentsTogether(db, queries), {
    cache: false,
    maxBatchSize: MAX_LISTS_PER_STATEMENT,
  });
  return {
    organization: rowLoader(async (ids) => byId(await listOrganizationsByIds(db, ids), ids), schedule),
    // Users come with the ids of their organizations (one statement): the e-mail rule needs them for every owner.
    user: rowLoader(async (ids) => {
      const rows = await listUsersWithOrganizationIds(db, ids);
      for (const { user, organizationIds } of rows) organizationIdsOf.prime(user.id, organizationIds);
      return byId(
        rows.map((row) => row.user),
        ids,
      );
    }, schedule),
    organizationIdsOf,
    documentList: {
      load: (query) => {
        const list = lists.load(query);
        listsInFlight.add(list);
        const settled = () => void listsInFlight.delete(list);
        list.then(settled, settled);
        return list;
      },
    },
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
