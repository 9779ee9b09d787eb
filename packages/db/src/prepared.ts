import { sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Database } from './client.js';
import { compileRowMapper, type SelectedField } from './row-mapper.js';

interface Executable<Result> {
  execute(values?: Record<string, unknown>): Promise<Result>;
}

/** What drizzle's prepared select keeps to map its rows (both drivers' prepared queries have these). */
interface MappedQuery {
  fields?: SelectedField[];
  joinsNotNullableMap?: Record<string, boolean>;
  customResultMapper?: (rows: unknown[][]) => unknown;
}

/** What drizzle's prepared query reads from its session when it runs: where to send the statement, what to log. */
interface SessionParts {
  client: unknown;
  logger: unknown;
}

const sessionOf = (db: Database): SessionParts => (db as unknown as { session: SessionParts }).session;

/**
 * A read built once and run many times (drizzle's `.prepare()` with `sql.placeholder`s): turning the query
 * builder into SQL text on every request was the largest cost of the data path. The statement is built on the
 * first database of each driver it meets and then run through the session of the database it is given (a
 * request's view with its deadline, a transaction, the background view), so deadlines, transactions and statement
 * counting hold exactly as for a query built on the spot. PostgreSQL also keeps it as a named statement per
 * connection (postgres-js), so it is parsed and planned once per connection.
 *
 * `build` must give the same SQL text for every database: it is called once per driver, never per request.
 */
export function reusableRead<Values extends Record<string, unknown>, Result>(
  name: string,
  build: (db: Database) => { prepare(name: string): Executable<Result> },
): (db: Database, values: Values) => Promise<Result> {
  // Keyed by the session's class: postgres-js and PGlite prepare differently.
  const byDriver = new Map<unknown, Executable<Result>>();
  return (db, values) => {
    const session = sessionOf(db);
    const driver = session.constructor;
    let prepared = byDriver.get(driver);
    if (!prepared) byDriver.set(driver, (prepared = withCompiledMapper(build(db).prepare(name))));
    // A shallow per-call view of the prepared query: its own client and logger, everything else shared.
    const bound = Object.create(prepared, { client: { value: session.client }, logger: { value: session.logger } }) as Executable<Result>;
    return bound.execute(values);
  };
}

/**
 * A read of rows by a batch of keys (a request loader's), built as two statements: `column = $1` for one key and
 * `column = any($1::type[])` for several. PostgreSQL never keeps a generic plan for `= any($1)` (an array of unknown
 * length looks dearer than the one it was given), so each of its runs is planned again; `= $1` is planned once per
 * connection, and a batch of one key is the common case (the caller's memberships, one document's owner).
 * `build` gets `matches`, which writes the key condition on a column; it must not depend on anything else.
 */
export function reusableReadByKeys<Result>(
  name: string,
  keyType: 'uuid' | 'text',
  build: (db: Database, matches: (column: AnyColumn) => SQL) => { prepare(name: string): Executable<Result> },
): (db: Database, keys: readonly string[]) => Promise<Result> {
  const one = reusableRead<{ key: string }, Result>(`${name}_one`, (db) =>
    build(db, (column) => sql`${column} = ${sql.placeholder('key')}`),
  );
  const many = reusableRead<{ keys: readonly string[] }, Result>(name, (db) =>
    build(db, (column) => sql`${column} = any(${sql.placeholder('keys')}::${sql.raw(keyType)}[])`),
  );
  return (db, keys) => (keys.length === 1 ? one(db, { key: keys[0]! }) : many(db, { keys }));
}

/**
 * Rows mapped by a function built for this statement (`compileRowMapper`) instead of drizzle's per-column walk.
 * Both drivers' prepared queries call `customResultMapper` with the rows in array mode when it is set.
 */
function withCompiledMapper<Result>(prepared: Executable<Result>): Executable<Result> {
  const query = prepared as unknown as MappedQuery;
  if (query.fields && !query.customResultMapper) query.customResultMapper = compileRowMapper(query.fields, query.joinsNotNullableMap);
  return prepared;
}
