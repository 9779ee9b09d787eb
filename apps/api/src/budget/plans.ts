import { findOrganizationBySlug, listPlansOfUser, type Database, type DatabaseHandle, type Plan } from '@latchkey/db';
import { isUuid } from '../domain/validate.js';

export interface PlanLookupOptions {
  database: Pick<DatabaseHandle, 'until' | 'deadlineFromNow'>;
  /**
   * How long a caller's plan is believed once read: a plan change applies within this long, and a caller costs
   * one statement per this long, not one per operation. @default 5000
   */
  ttlMs?: number;
  /** callers remembered at once; the least recently read is forgotten first. @default 10000 */
  maxCallers?: number;
  /** @default Date.now */
  now?: () => number;
  /** what is read for a key: @default an account's best plan (`planOf(userId)`) */
  read?: (db: Database, key: string) => Promise<Plan>;
  /** which keys can be read at all (others are FALLBACK at once) @default account ids (UUIDs) */
  accepts?: (key: string) => boolean;
}

/** A caller's plan: the best among the organizations the account belongs to (`PRO` over `FREE`). */
export interface PlanLookup {
  /** The plan now: at once when read within the last `ttlMs`, else the promise of reading it (never rejects). */
  planOf(userId: string): Plan | Promise<Plan>;
}

/** A member of no organization, a token whose subject is no account, or a read that failed: `FREE`. */
const FALLBACK: Plan = 'FREE';

/** The best of an account's plans: what sizes its bucket. */
export const bestPlanOf = (plans: readonly Plan[]): Plan => (plans.includes('PRO') ? 'PRO' : FALLBACK);

/**
 * Plans read at decision time, a few seconds at most out of date. A failed read (the database down or slow) never
 * fails the operation: the plan last read for the caller, else FALLBACK, and the next operation asks again.
 */
export function createPlanLookup(options: PlanLookupOptions): PlanLookup {
  const { database, ttlMs = 5000, maxCallers = 10_000, now = Date.now } = options;
  const { read: readPlan = readPlanOfUser, accepts = isUuid } = options;
  const known = new Map<string, { plan: Plan; until: number }>();
  const reading = new Map<string, Promise<Plan>>();
  const remember = (userId: string, plan: Plan) => {
    known.delete(userId);
    if (known.size >= maxCallers) known.delete(known.keys().next().value as string);
    known.set(userId, { plan, until: now() + ttlMs });
    return plan;
  };
  const read = (userId: string): Promise<Plan> =>
    readPlan(database.until(database.deadlineFromNow()), userId).then(
      (plan) => remember(userId, plan),
      () => known.get(userId)?.plan ?? FALLBACK,
    );
  return {
    planOf(userId) {
      if (!accepts(userId)) return FALLBACK;
      const entry = known.get(userId);
      if (entry && entry.until > now()) return entry.plan;
      let pending = reading.get(userId);
      if (!pending) {
        pending = read(userId).finally(() => reading.delete(userId));
        reading.set(userId, pending);
      }
      return pending;
    },
  };
}

const readPlanOfUser = async (db: Database, userId: string): Promise<Plan> => bestPlanOf(await listPlansOfUser(db, userId));

/** The plan of an organization, by slug (a service's: config/services.ts); FALLBACK while it does not exist. */
export const readPlanOfOrganization = async (db: Database, slug: string): Promise<Plan> =>
  (await findOrganizationBySlug(db, slug))?.plan ?? FALLBACK;
