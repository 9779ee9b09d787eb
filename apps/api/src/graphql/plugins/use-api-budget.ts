import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '@latchkey/auth/tokens';
import { requestMemo } from '@latchkey/http';
import { handleMaybePromise, type MaybePromise } from '@whatwg-node/promise-helpers';
import { getOperationAST, GraphQLError, Kind, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../context.js';
import { createCostEstimator, type CostEstimator, type CostLimitOptions } from './use-cost-limit.js';
import { actualCost } from '../actual-cost.js';
import type { Bucket, Budgets } from '../../budget/budgets.js';
import type { BucketSize } from '../../config/budget.js';
import { ErrorCode } from '../errors.js';
import { costExtension, rateLimitFields, retryAfterOf, type CostExtension } from '../../budget/report.js';

export interface ApiBudgetOptions {
  budgets: Budgets;
  /** the cost model of MAX_COST: an operation is admitted by its estimate */
  cost: CostLimitOptions;
  /** the estimator MAX_COST uses (one cache for both); undefined: one of its own */
  estimate?: CostEstimator;
  /**
   * The caller of a request before its context is built (generic-auth's `resolveUserFn`): whose budget an operation
   * that fails validation spends.
   */
  callerOf: (context: object) => MaybePromise<Caller>;
}

/** What the HTTP answer reports: the bucket and its level after the request's last operation. */
interface Reported {
  bucket: Bucket;
  level: number;
  /** refused by validation: its result has no cost yet (it never reached execution) */
  invalid?: boolean;
}

type Context = GraphQLContext & { req?: IncomingMessage; res?: ServerResponse };

/**
 * Fair use (docs/graphql.md, "Budgets"): every caller spends a token bucket of cost points. An operation is
 * admitted by its estimated cost (the MAX_COST model), settled at its actual cost when it ends (the difference
 * refunded, or charged when a list returned more than estimated), and reported in `extensions.cost` and the
 * RateLimit fields. A refused operation never runs and costs its minimum, 1. Listed before the other checks before
 * execution, so that what they refuse is charged that minimum too (it is settled after them).
 */
export function useApiBudget(options: ApiBudgetOptions): Plugin<GraphQLContext> {
  const { bucketOf } = options.budgets;
  const { requestedCost, admit, settle, levelNow, chargeInvalid, reportOf, reportOnly } = createMeter(options);
  return {
    onValidate({ context }) {
      return ({ valid }) => {
        if (!valid) void chargeInvalid(context as Context);
      };
    },
    onExecute({ args, setResultAndStopExecution }) {
      const requested = requestedCost(args);
      return handleMaybePromise(
        () => bucketOf((args.contextValue as Context).caller, (args.contextValue as Context).req),
        (bucket) => {
          if (asksForItsBudgetOnly(args.document, args.operationName)) return reportOnly(args, bucket);
          return handleMaybePromise(
            () => admit(args, bucket, requested, setResultAndStopExecution),
            (admitted) =>
              admitted
                ? {
                    onExecuteDone({ result, setResult }: { result: unknown; setResult: (result: ExecutionResult) => void }) {
                      if (!isAsyncIterable(result)) return void setResult(settle(args, bucket, requested, result as ExecutionResult));
                      // @defer / @stream: settled at the requested cost, reported in the final payload.
                      return {
                        onNext({
                          result: payload,
                          setResult: setPayload,
                        }: {
                          result: unknown;
                          setResult: (result: ExecutionResult) => void;
                        }) {
                          if ((payload as { hasNext?: boolean }).hasNext !== false) return;
                          setPayload(
                            withCost(payload as ExecutionResult, costExtension(bucket.size, requested, requested, levelNow(bucket))),
                          );
                        },
                      };
                    },
                  }
                : undefined,
          );
        },
      );
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      // Charged when it starts, at its requested cost; its events are not. Reported in its first payload.
      const requested = requestedCost(args);
      return handleMaybePromise(
        () => bucketOf((args.contextValue as Context).caller, (args.contextValue as Context).req),
        (bucket) =>
          handleMaybePromise(
            () => admit(args, bucket, requested, setResultAndStopExecution),
            (admitted) => {
              if (!admitted) return;
              let first = true;
              return {
                onSubscribeResult: () => ({
                  onNext({ result, setResult }: { result: unknown; setResult: (result: ExecutionResult) => void }) {
                    if (!first) return;
                    first = false;
                    setResult(withCost(result as ExecutionResult, costExtension(bucket.size, requested, requested, levelNow(bucket))));
                  },
                }),
              };
            },
          ),
      );
    },
    onResultProcess({ result, setResult, serverContext }) {
      const { req, res } = serverContext as { req?: IncomingMessage; res?: ServerResponse };
      if (!req || !res) return;
      // A publicly cacheable answer (spec Authorization 14) carries no caller's figures: a cache would hand them on.
      if (String(res.getHeader('cache-control') ?? '').startsWith('public')) return void setResult(withoutCost(result) as never);
      const last = reportOf(req);
      if (!last || res.headersSent) return;
      for (const [name, value] of Object.entries(rateLimitFields(last.bucket.size, last.level))) res.setHeader(name, value);
      // A single operation refused by validation: its minimum charge, reported like any other.
      if (last.invalid && !Array.isArray(result) && !(result as ExecutionResult).extensions?.['cost'])
        setResult(withCost(result as ExecutionResult, costExtension(last.bucket.size, 1, 1, last.level)) as never);
    },
  };
}

/** The charges of the budget plugin: an operation's requested cost, its admission, its settlement, and what is reported. */
function createMeter(options: ApiBudgetOptions) {
  const { store, bucketOf, now, counted } = options.budgets;
  const estimate = options.estimate ?? createCostEstimator(options.cost);
  const reported = requestMemo<Reported>("the request's budget, as reported");
  /** Admitted by: the MAX_COST estimate (left out of it, introspection has a stated cost), at least 1. */
  const requestedCost = (args: ExecutionArgs) =>
    Math.max(1, estimate(args.schema, args.document, args.operationName, args.variableValues) ?? 1) +
    (introspects(args.document) ? INTROSPECTION_COST : 0);

  const note = (context: Context, bucket: Bucket, level: number, invalid?: boolean) => {
    if (context.req) reported.set(context.req, { bucket, level, ...(invalid ? { invalid } : {}) });
  };

  /** Charges an admitted operation its actual cost, and says so in its result. */
  const settle = (args: ExecutionArgs, bucket: Bucket, requested: number, result: ExecutionResult): ExecutionResult => {
    const operation = getOperationAST(args.document, args.operationName);
    const walked = operation ? actualCost(args.schema, args.document, operation, args.variableValues, result.data) : 0;
    const actual = Math.max(1, walked);
    const level = store.settle(bucket.key, bucket.size, actual - requested, now());
    counted.spent(bucket.plan, actual);
    note(args.contextValue as Context, bucket, level);
    return withCost(result, costExtension(bucket.size, requested, actual, level));
  };

  /** Admits an operation or refuses it; undefined once refused (the result is set). */
  const admit = (
    args: ExecutionArgs,
    bucket: Bucket,
    requested: number,
    refuse: (result: ExecutionResult) => void,
  ): MaybePromise<boolean> => {
    const at = now();
    if (requested > options.cost.maxCost) {
      // MAX_COST refuses it next (QUERY_TOO_COMPLEX): charged its minimum here.
      note(args.contextValue as Context, bucket, store.settle(bucket.key, bucket.size, 1, at));
      return false;
    }
    return handleMaybePromise(
      () => store.take(bucket.key, bucket.size, requested, at),
      (admission) => {
        if (admission.admitted) return true;
        counted.refused(bucket.plan);
        const level = store.settle(bucket.key, bucket.size, 1, now());
        note(args.contextValue as Context, bucket, level);
        refuse({
          errors: [rateLimited(bucket.size, requested, level, retryAfterOf(admission, bucket.size, requested, level))],
          extensions: { cost: costExtension(bucket.size, requested, 1, level) },
        });
        return false;
      },
    );
  };

  /** The level now, at once: settling nothing (a peek may ask the shared buckets; a caller just admitted is known). */
  const levelNow = (bucket: Bucket) => store.settle(bucket.key, bucket.size, 0, now());

  /** An operation refused by validation: its minimum, 1, from whoever sent it. */
  const chargeInvalid = (context: Context) =>
    handleMaybePromise(
      () => options.callerOf(context),
      (caller) =>
        handleMaybePromise(
          () => bucketOf(caller, context.req),
          (bucket) => note(context, bucket, store.settle(bucket.key, bucket.size, 1, now()), true),
        ),
      () => undefined, // a caller that cannot be judged now is refused later anyway
    );

  /** `Query.rateLimit` alone: charged nothing, reported as it stands. */
  const reportOnly = (args: ExecutionArgs, bucket: Bucket) => ({
    onExecuteDone({ result, setResult }: { result: unknown; setResult: (result: ExecutionResult) => void }) {
      return handleMaybePromise(
        () => store.peek(bucket.key, bucket.size, now()),
        (level) => {
          note(args.contextValue as Context, bucket, level);
          if (!isAsyncIterable(result)) setResult(withCost(result as ExecutionResult, costExtension(bucket.size, 0, 0, level)));
        },
      );
    },
  });

  return { requestedCost, admit, settle, levelNow, chargeInvalid, reportOnly, reportOf: (req: IncomingMessage) => reported.get(req) };
}

/** Root fields an operation may ask for without being charged: what the caller's budget is (and `__typename`). */
const FREE_OF_CHARGE: ReadonlySet<string> = new Set(['rateLimit', '__typename']);

/** Whether the operation asks only for the caller's budget (a fragment at its root counts as asking for more). */
function asksForItsBudgetOnly(document: DocumentNode, operationName: string | null | undefined): boolean {
  const operation = getOperationAST(document, operationName);
  return (
    operation?.operation === 'query' &&
    operation.selectionSet.selections.every((selection) => selection.kind === Kind.FIELD && FREE_OF_CHARGE.has(selection.name.value)) &&
    operation.selectionSet.selections.some((selection) => selection.kind === Kind.FIELD && selection.name.value === 'rateLimit')
  );
}

/** What introspection costs besides its fields: a schema's worth of answer, asked for at once. */
export const INTROSPECTION_COST = 100;

const introspecting = new WeakMap<DocumentNode, boolean>();

/** Whether an operation of the document asks for `__schema` or `__type` at its root. */
function introspects(document: DocumentNode): boolean {
  let found = introspecting.get(document);
  if (found === undefined) {
    found = document.definitions.some(
      (definition) =>
        definition.kind === Kind.OPERATION_DEFINITION &&
        definition.selectionSet.selections.some(
          (selection) => selection.kind === Kind.FIELD && (selection.name.value === '__schema' || selection.name.value === '__type'),
        ),
    );
    introspecting.set(document, found);
  }
  return found;
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  value != null && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';

/**
 * The result with its cost. Copied with Object.assign, not `{ ...result, extensions }`: V8 (node 20) gives an object
 * spread followed by a property of its own a new hidden class on every call, and every answer then had a shape of its
 * own all the way to its serialization (each inline cache on the way megamorphic, a map allocated per answer).
 */
const withCost = (result: ExecutionResult, cost: CostExtension): ExecutionResult =>
  Object.assign({}, result, { extensions: result.extensions ? Object.assign({}, result.extensions, { cost }) : { cost } });

function withoutCost(result: unknown): unknown {
  if (Array.isArray(result)) return result.map(withoutCost);
  const extensions = (result as ExecutionResult | null)?.extensions;
  if (!extensions || !('cost' in extensions)) return result;
  const rest: Record<string, unknown> = {};
  for (const key of Object.keys(extensions)) if (key !== 'cost') rest[key] = extensions[key];
  return Object.assign({}, result, { extensions: Object.keys(rest).length > 0 ? rest : undefined });
}

/**
 * An operation refused by its caller's budget: it never runs. 429 under application/graphql-response+json, 200 under
 * application/json (a request that reached the GraphQL layer), with `Retry-After` when waiting can help. An
 * operation costed above the bucket's capacity can never run: `exceedsCapacity`, and no `Retry-After`.
 */
export function rateLimited(size: BucketSize, requested: number, level: number, retryAfterSeconds: number | undefined): GraphQLError {
  const exceedsCapacity = requested > size.capacity;
  const available = Math.max(0, Math.floor(level));
  const message = exceedsCapacity
    ? `This operation costs ${requested} points, more than this budget ever holds (${size.capacity}).`
    : `This operation costs ${requested} points and ${available} are available; they refill at ${size.restorePerSecond} a second.`;
  return new GraphQLError(message, {
    extensions: {
      code: ErrorCode.RATE_LIMITED,
      ...costExtension(size, requested, null, level),
      exceedsCapacity,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      http: {
        status: 429,
        spec: true,
        ...(retryAfterSeconds === undefined ? {} : { headers: { 'Retry-After': String(retryAfterSeconds) } }),
      },
    },
  });
}
