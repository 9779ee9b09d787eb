import {
  listMembershipsOfUsers,
  listOrganizationIdsOfUsers,
  listOrganizationsByIds,
  listOrganizationsBySlugs,
  listUsersWithOrganizationIds,
  listVisibleDocumentsTogether,
  listVisibleDocumentsWithCaller,
  type Database,
  type DocumentListQuery,
  type ListedDocument,
  type MembershipWithOrganizationRow,
  type OrganizationRow,
  type UserRow,
  type UserWithRoles,
} from '@latchkey/db';
import DataLoader from 'dataloader';
import { requestMemo } from '@latchkey/http';
import { sameList, VisibilityGuesses, type VisibilityGuess } from './visibility-guesses.js';

/**
 * A request's batched lookup of one kind of row: every `load` of a key it does not hold yet, made in the same
 * tick, becomes one SQL statement. A key it holds (primed by a statement that read the row anyway, or loaded
 * earlier in the request) is answered at once, without a promise: a page's resolvers then run synchronously
 * for every row whose data the page's own statements brought, which spares the executor a promise per field.
 */
export interface RowLoader<Value> {
  load(key: string): Value | Promise<Value>;
  prime(key: string, value: Value): void;
  /** drops what is held for `key` (a write of the request changed it): the next `load` reads it again */
  forget(key: string): void;
}

/**
 * When a request's batch of rows may go: once the promise jobs of the moment have run (a `setImmediate`, so that every
 * resolver the same answer woke has asked for its rows and its lists), at once if no list of documents is in flight,
 * else after the lists are answered and their pages primed the loaders. A dashboard's pinned document would otherwise
 * load its owner, and its `organization(slug)` the organization, in statements of their own just before the lists
 * brought them anyway: how many statements it cost depended on which resolver asked first.
 */
type BatchSchedule = (dispatch: () => void) => void;

function rowLoader<Value>(batch: (keys: readonly string[]) => Promise<Value[]>, schedule: BatchSchedule): RowLoader<Value> {
  const held = new Map<string, Value>();
  // Made on the first key not held: on a page every row a resolver asks for was primed by the page's own statement,
  // and most of a request's loaders never read anything (each DataLoader is a few objects a request would carry).
  let loader: DataLoader<string, Value> | undefined;
  const newLoader = () =>
    new DataLoader<string, Value>(
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
    load: (key) => (held.has(key) ? held.get(key)! : (loader ??= newLoader()).load(key)),
    prime: (key, value) => void held.set(key, value),
    forget: (key) => {
      held.delete(key);
      loader?.clear(key);
    },
  };
}

/**
 * Batched lookups for one request: a page of documents with owners and organizations costs the same number
 * of statements whatever its size.
 */
export interface RequestLoaders {
  /** by id; a row primed here is also found by its slug */
  organization: RowLoader<OrganizationRow | null>;
  /** by slug: an organization a page or a membership of the request brought is at hand */
  organizationBySlug: RowLoader<OrganizationRow | null>;
  user: RowLoader<UserRow | null>;
  /** the ids of the organizations a user belongs to */
  organizationIdsOf: RowLoader<readonly string[]>;
  /** a user's memberships with their organizations, by organization slug */
  membershipsOf: RowLoader<readonly MembershipWithOrganizationRow[]>;
  /**
   * Lists of visible documents: the lists a request asks for in the same tick (a dashboard's six) are read in one
   * statement. Never cached across requests: each list is read when asked, or read ahead with the caller.
   */
  documentList: DocumentListLoader;
}

export interface DocumentListLoader {
  /**
   * Reads a list. `callerId` names the caller whose visibility the query carries: it becomes the guess for that
   * caller's next request. A list this request read ahead with its caller (`readWithCaller`) answers a `load` of the
   * same list, whatever instant each visibility names (the read ahead's is the earlier one, taken before it was sent).
   */
  load(query: DocumentListQuery, callerId?: string): Promise<ListedDocument[]>;
  /** the visibility of this caller's last list read by this process: a guess of the SQL to send, never a decision */
  guessFor(callerId: string): VisibilityGuess | undefined;
  /**
   * Reads `query` ahead, and in the same statement the caller's account and roles (what it resolves to). The rows
   * wait for a `load` of the same list; a list that no `load` claims is never used.
   */
  readWithCaller(query: DocumentListQuery, callerId: string): Promise<UserWithRoles | null>;
}

/** At most this many lists in one statement. */
const MAX_LISTS_PER_STATEMENT = 8;

function byKey<Row>(rows: readonly Row[], keyOf: (row: Row) => string, keys: readonly string[]): (Row | null)[] {
  const found = new Map(rows.map((row) => [keyOf(row), row]));
  return keys.map((key) => found.get(key) ?? null);
}

function groupedBy<Row>(rows: readonly Row[], keyOf: (row: Row) => string, keys: readonly string[]): Row[][] {
  const groups = new Map<string, Row[]>();
  for (const row of rows) (groups.get(keyOf(row)) ?? groups.set(keyOf(row), []).get(keyOf(row))!).push(row);
  return keys.map((key) => groups.get(key) ?? []);
}

/** A list of a request's batch, and whose account and roles to read with it. */
interface ListKey {
  query: DocumentListQuery;
  callerId: string | null;
}

interface ListRead {
  rows: ListedDocument[];
  caller?: UserWithRoles | null;
}

/** One batch of lists; with the caller's account read in the same statement when one of them asks for it. */
async function readListBatch(db: Database, keys: readonly ListKey[]): Promise<ListRead[]> {
  const queries = keys.map((key) => key.query);
  const callerId = keys.find((key) => key.callerId !== null)?.callerId ?? null;
  if (callerId === null) return (await listVisibleDocumentsTogether(db, queries)).map((rows) => ({ rows }));
  const { lists, caller } = await listVisibleDocumentsWithCaller(db, queries, callerId);
  return lists.map((rows) => ({ rows, caller }));
}

function documentListLoader(db: Database, guesses: VisibilityGuesses, listsInFlight: Set<Promise<unknown>>): DocumentListLoader {
  const lists = new DataLoader<ListKey, ListRead>((keys) => readListBatch(db, keys), {
    cache: false,
    maxBatchSize: MAX_LISTS_PER_STATEMENT,
  });
  const readAhead: { query: DocumentListQuery; rows: Promise<ListedDocument[]> }[] = [];
  const read = (key: ListKey): Promise<ListRead> => {
    const list = lists.load(key);
    listsInFlight.add(list);
    const settled = () => void listsInFlight.delete(list);
    list.then(settled, settled);
    return list;
  };
  return {
    load: (query, callerId) => {
      if (callerId !== undefined) guesses.remember(callerId, query.visibility);
      const ahead = readAhead.findIndex((entry) => sameList(entry.query, query));
      if (ahead >= 0) return readAhead.splice(ahead, 1)[0]!.rows;
      return read({ query, callerId: null }).then(({ rows }) => rows);
    },
    guessFor: (callerId) => guesses.get(callerId),
    readWithCaller: (query, callerId) => {
      const list = read({ query, callerId });
      const rows = list.then(({ rows }) => rows);
      // Its failure reaches the caller's subject, which the request awaits; unclaimed rows must not fail loudly again.
      rows.catch(() => {});
      readAhead.push({ query, rows });
      return list.then(({ caller }) => caller ?? null);
    },
  };
}

function createRequestLoaders(db: Database, guesses: VisibilityGuesses): RequestLoaders {
  const listsInFlight = new Set<Promise<unknown>>();
  const schedule: BatchSchedule = (dispatch) =>
    void setImmediate(() => {
      if (listsInFlight.size === 0) return dispatch();
      void Promise.allSettled([...listsInFlight]).then(() => setImmediate(dispatch));
    });
  // No list brings memberships: their batch goes without waiting for any (the caller's, asked early, then runs beside them).
  const soon: BatchSchedule = (dispatch) => void setImmediate(dispatch);
  const organizationIdsOf = rowLoader<readonly string[]>(async (userIds) => {
    const rows = await listOrganizationIdsOfUsers(db, userIds);
    return groupedBy(rows, (row) => row.userId, userIds).map((memberships) => memberships.map((row) => row.organizationId));
  }, schedule);
  const organizationBySlug = rowLoader(
    async (slugs) => byKey(await listOrganizationsBySlugs(db, slugs), (row) => row.slug, slugs),
    schedule,
  );
  const organizationById = rowLoader(async (ids) => {
    const rows = await listOrganizationsByIds(db, ids);
    for (const row of rows) organizationBySlug.prime(row.slug, row);
    return byKey(rows, (row) => row.id, ids);
  }, schedule);
  // An organization is the same row by id and by slug: whatever primes one primes the other.
  const organization: RowLoader<OrganizationRow | null> = {
    load: organizationById.load,
    prime: (id, row) => {
      organizationById.prime(id, row);
      if (row) organizationBySlug.prime(row.slug, row);
    },
    forget: organizationById.forget,
  };
  const membershipsOf = rowLoader<readonly MembershipWithOrganizationRow[]>(async (userIds) => {
    const byUser = groupedBy(await listMembershipsOfUsers(db, userIds), (row) => row.userId, userIds);
    for (const [index, memberships] of byUser.entries()) {
      organizationIdsOf.prime(
        userIds[index]!,
        memberships.map((membership) => membership.organization.id),
      );
      for (const membership of memberships) organization.prime(membership.organization.id, membership.organization);
    }
    return byUser;
  }, soon);
  return {
    organization,
    organizationBySlug,
    membershipsOf,
    // Users come with the ids of their organizations (one statement): the e-mail rule needs them for every owner.
    user: rowLoader(async (ids) => {
      const rows = await listUsersWithOrganizationIds(db, ids);
      for (const { user, organizationIds } of rows) organizationIdsOf.prime(user.id, organizationIds);
      return byKey(
        rows.map((row) => row.user),
        (user) => user.id,
        ids,
      );
    }, schedule),
    organizationIdsOf,
    documentList: documentListLoader(db, guesses, listsInFlight),
  };
}

/**
 * One set of loaders per request (keyed by the request's context object), created on first use with the
 * request's own view of the database (its deadline).
 */
export function createLoaderFactory() {
  const byRequest = requestMemo<RequestLoaders>('loaders of the request');
  // Shared by the requests of this factory (this process's service): the guesses outlive a request, nothing else does.
  const guesses = new VisibilityGuesses();
  return (request: object, db: Database): RequestLoaders => {
    let loaders = byRequest.get(request);
    if (!loaders) byRequest.set(request, (loaders = createRequestLoaders(db, guesses)));
    return loaders;
  };
}
export type LoaderFactory = ReturnType<typeof createLoaderFactory>;
