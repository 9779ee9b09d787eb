import { handleMaybePromise } from '@whatwg-node/promise-helpers';
import type { Resolvers } from '../../generated/resolvers.js';

/** Fields these resolvers answer without the database (a plan that cannot be read is the one last read, else FREE). */
export const budgetDatabaseFree = [
  'Query.rateLimit',
  'RateLimit.maximumAvailable',
  'RateLimit.currentlyAvailable',
  'RateLimit.restoreRate',
  'RateLimit.plan',
];

export const budgetResolvers = {
  Query: {
    // The bucket's level now, charging nothing (the budgets leave an operation of this field alone uncharged).
    rateLimit: (_source, _args, context) => {
      const { budgets } = context.app;
      if (!budgets) return null;
      return handleMaybePromise(
        () => budgets.bucketOf(context.caller, context.req),
        ({ key, size, plan }) =>
          handleMaybePromise(
            () => budgets.store.peek(key, size, budgets.now()),
            (level) => ({
              maximumAvailable: size.capacity,
              currentlyAvailable: Math.max(0, Math.floor(level)),
              restoreRate: size.restorePerSecond,
              plan: plan === 'guest' ? null : plan,
            }),
          ),
      );
    },
  },
} satisfies Resolvers;
