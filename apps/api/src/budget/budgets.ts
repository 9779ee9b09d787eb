import type { IncomingMessage } from 'node:http';
import { sourceKey } from '@latchkey/auth';
import type { Caller } from '@latchkey/auth/tokens';
import type { DatabaseHandle, Plan } from '@latchkey/db';
import { handleMaybePromise, type MaybePromise } from '@whatwg-node/promise-helpers';
import type { BucketSize, BudgetSettings } from '../config/budget.js';
import { createMemoryBudgetStore, type BudgetStore } from './bucket.js';
import { createPlanLookup, readPlanOfOrganization } from './plans.js';
import { NO_SERVICE_PRINCIPALS, serviceActor, type ServicePrincipals } from '../domain/service-principals.js';

/** Whose budget a request spends, and its size. */
export interface Bucket {
  key: string;
  size: BucketSize;
  /** what sized it, as the metrics label it */
  plan: Plan | 'guest';
}

/** The bucket of an account (its token's `sub`), the same on every instance and for the CLI. */
export const accountBucketKey = (subject: string) => `user:${subject}`;

/** What the metrics count of the budgets (METRICS_PORT). */
export interface BudgetMetrics {
  refused(plan: string): void;
  spent(plan: string, points: number): void;
}

const UNCOUNTED: BudgetMetrics = { refused: () => undefined, spent: () => undefined };

/** The budgets of this instance, spent alike by GraphQL (over HTTP and WebSocket) and REST. */
export interface Budgets {
  store: BudgetStore;
  /**
   * The bucket of a caller: the account's (sized by its plan, read now), a service's (by client id, sized by its
   * organization's plan), or a guest's client address (its /64).
   */
  bucketOf(caller: Caller, req: IncomingMessage | undefined): MaybePromise<Bucket>;
  /** milliseconds, the store's clock */
  now(): number;
  /** the metrics' counters, or nothing counted */
  counted: BudgetMetrics;
}

export interface BudgetsOptions {
  settings: BudgetSettings;
  database: Pick<DatabaseHandle, 'until' | 'deadlineFromNow'>;
  /** a guest's address as TRUST_PROXY resolves it */
  clientAddressOf: (req: IncomingMessage) => string;
  /**
   * Milliseconds of a monotonic clock, fractional: a bucket refills by the microsecond, so one that refills faster
   * than anything spends it (the test services' and the bench's) is full again before the next answer.
   * @default performance.now
   */
  now?: () => number;
  metrics?: BudgetMetrics;
  /** where the buckets live (open-store.ts); @default this process's memory */
  store?: BudgetStore;
  /** the services (client credentials): each is charged by its client id, under its organization's plan */
  services?: ServicePrincipals;
}

export function createBudgets(options: BudgetsOptions): Budgets {
  const { settings, database, clientAddressOf, now = () => performance.now(), metrics } = options;
  const plans = createPlanLookup({ database, now });
  const services = options.services ?? NO_SERVICE_PRINCIPALS;
  const organizationPlans = createPlanLookup({ database, now, read: readPlanOfOrganization, accepts: () => true });
  return {
    store: options.store ?? createMemoryBudgetStore(),
    now,
    counted: metrics ?? UNCOUNTED,
    bucketOf(caller, req) {
      if (!caller) return { key: `guest:${sourceKey(req ? clientAddressOf(req) : 'unknown')}`, size: settings.guest, plan: 'guest' };
      const service = services.registrationOf(caller);
      if (service) {
        return handleMaybePromise(
          () => organizationPlans.planOf(service.organization),
          (plan) => ({ key: serviceActor(service.clientId), size: settings.plans[plan], plan }),
        );
      }
      return handleMaybePromise(
        () => plans.planOf(caller.subject),
        (plan) => ({ key: accountBucketKey(caller.subject), size: settings.plans[plan], plan }),
      );
    },
  };
}
