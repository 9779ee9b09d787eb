import { handleMaybePromise } from '@whatwg-node/promise-helpers';
import type { SignedInCaller } from '@latchkey/auth/tokens';
import { restError, type RestCharge } from './router.js';
import type { Budgets } from '../budget/budgets.js';
import { costExtension, rateLimitFields, retryAfterOf } from '../budget/report.js';

/**
 * REST's charge to the same buckets as GraphQL: a request costs what its route declares (a list its page size), at
 * admission; one refused by the budget, or before its handler runs (signed out, denied, a body refused), costs 1;
 * over budget it is answered 429 with `Retry-After` when waiting helps (docs/endpoints.md).
 */
export function restBudgetCharge({ store, bucketOf, now, counted }: Budgets): RestCharge<SignedInCaller> {
  return (request, cost) =>
    handleMaybePromise(
      () => bucketOf(request.caller, request.req),
      ({ key, size, plan }) =>
        handleMaybePromise(
          () => store.take(key, size, cost, now()),
          (admission) => {
            if (admission.admitted) {
              counted.spent(plan, cost);
              return {
                headers: rateLimitFields(size, admission.available),
                // (the metrics keep counting what was admitted: a counter never goes down)
                toMinimum: () => rateLimitFields(size, store.settle(key, size, 1 - cost, now())),
              };
            }
            counted.refused(plan);
            const level = store.settle(key, size, 1, now());
            const retryAfter = retryAfterOf(admission, size, cost, level);
            const exceedsCapacity = admission.exceedsCapacity;
            const refused = restError(
              429,
              exceedsCapacity ? 'This request costs more than this budget ever holds.' : 'This request costs more than is available now.',
              { code: 'RATE_LIMITED', exceedsCapacity, ...costExtension(size, cost, 1, level) },
              retryAfter === undefined ? undefined : { 'retry-after': String(retryAfter) },
            );
            return { refused, headers: rateLimitFields(size, level) };
          },
        ),
    );
}
