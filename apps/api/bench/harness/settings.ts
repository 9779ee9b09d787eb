import { createHash } from 'node:crypto';
import { DocumentDashboardDocument } from '@latchkey/client';

// The benchmark's settings (from the environment, see run.ts) and the operations it sends.

export const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 50);
export const DURATION_S = intEnv('BENCH_DURATION', 5);
export const ROUNDS = intEnv('BENCH_ROUNDS', 5);
export const WARMUP_S = intEnv('BENCH_WARMUP', 10);
/** Seconds without load before the settled memory reading (V8's memory reducer needs about 20-25 s). */
export const SETTLE_S = intEnv('BENCH_SETTLE', 30);
export const READY_TIMEOUT_MS = 60_000;
export const COMPARE_METRICS = process.env.BENCH_METRICS === 'compare';
/** Another checkout's `apps/api/dist`: run that build beside this one, both under the same load at the same time. */
export const COMPARE_BUILD = process.env.BENCH_COMPARE_BUILD?.trim() || undefined;
/**
 * The other build started first. Of two servers sharing a CPU, a server's place (started first or second) was seen
 * to be worth a few percent per request whatever its build: a comparison is read from two runs, one each way.
 */
export const COMPARE_SWAPPED = process.env.BENCH_COMPARE_SWAP === '1';
/** Budgets off, and on with their buckets in PostgreSQL (or memory on PGlite) and in Redis, alternated. */
export const COMPARE_BUDGETS = process.env.BENCH_BUDGETS === 'compare';
if (process.env.BENCH_BUDGETS !== undefined && !COMPARE_BUDGETS)
  throw new Error(`BENCH_BUDGETS: only "compare" is known, got "${process.env.BENCH_BUDGETS}"`);
/** The bench's documents with a deprecated field against the same without, on one server with metrics on, alternated. */
export const COMPARE_DEPRECATIONS = process.env.BENCH_DEPRECATIONS === 'compare';
if (process.env.BENCH_DEPRECATIONS !== undefined && !COMPARE_DEPRECATIONS)
  throw new Error(`BENCH_DEPRECATIONS: only "compare" is known, got "${process.env.BENCH_DEPRECATIONS}"`);
/** Where the Redis buckets of BENCH_BUDGETS=compare live; without a Redis answering there they are left out. */
export const BENCH_REDIS_URL = process.env.BENCH_REDIS_URL?.trim() || 'redis://127.0.0.1:6379';
if (process.env.BENCH_METRICS !== undefined && !COMPARE_METRICS)
  throw new Error(`BENCH_METRICS: only "compare" is known, got "${process.env.BENCH_METRICS}"`);

const SERVER_NAMES = ['latchkey', 'stock-yoga', 'yoga-floor', 'raw-node'] as const;
type ServerName = (typeof SERVER_NAMES)[number];

export const STATUS_QUERY = '{ status { version } }';
export const VIEWER_QUERY = '{ viewer { subject } }';
// A page of 20 documents with owners, organizations and viewerCan: the caller, and the page with its organizations
// and its owners with their organization ids (for the e-mail rule): 2 SQL statements whatever the page size.
// alice (OWNER of acme) reads acme's documents: the first page, or the page 1,000 rows in (`after`).
export const DOCUMENTS_QUERY =
  'query ($after: String) { documents(first: 20, filter: { organization: "acme" }, after: $after) { edges { cursor node { id title status updatedAt internalNotes owner { displayName email } organization { slug } viewerCan { update publish archive delete setLegalHold } } } pageInfo { hasNextPage endCursor } } }';

// The realistic operation: packages/client's dashboard (about 3 KB of text), sent as text or as
// its APQ hash alone.
export const DASHBOARD_QUERY: string = DocumentDashboardDocument.toString();
export const DASHBOARD_HASH = createHash('sha256').update(DASHBOARD_QUERY).digest('hex');

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

export function selectedServers(): Set<ServerName> {
  const raw = process.env.BENCH_ONLY?.trim();
  if (!raw) return new Set(SERVER_NAMES);
  const names = raw
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(SERVER_NAMES as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`BENCH_ONLY: unknown server(s) ${unknown.join(', ')}; expected ${SERVER_NAMES.join(', ')}`);
  return new Set(names as ServerName[]);
}
