import type { DocumentNode, ExecutionResult, GraphQLError, GraphQLSchema } from 'graphql';
import type { RouteRules } from './route-rules.js';

export interface RouteRulesOptions<Context> {
  /** the route rules, shared with every other check of what a guest may see */
  rules: RouteRules;
  /** whether the operation's caller is a guest (the caller is resolved before execution: generic-auth's resolveUserFn) */
  isGuest: (context: Context) => boolean;
  /** the error a guest's refused operation carries (UNAUTHENTICATED with its HTTP status and challenge) */
  refusal: (context: Context) => GraphQLError;
  /**
   * The scopes a signed-in caller holds (its access token's API scopes); null: a caller scopes do not restrict.
   * Without it, `@scope` is not checked.
   */
  grantedScopes?: (context: Context) => ReadonlySet<string> | null;
  /** the error an operation carries when its caller lacks a scope it needs: every scope it needs, and the missing ones */
  scopeRefusal?: (required: readonly string[], missing: readonly string[]) => GraphQLError;
}

interface OperationPayload<Context> {
  args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null; contextValue: Context };
  setResultAndStopExecution: (result: ExecutionResult) => void;
}

/**
 * The route level as an Envelop plugin (spec Authorization 1, 4, 7): a guest whose operation selects a field
 * that `@public` does not govern is refused whole, before anything runs: one error and no `data` (a request
 * error: 401 under application/graphql-response+json, 200 under application/json). A signed-in caller passes;
 * `@auth(role:)` and `@can` are decided at the field's resolver (`applyDirectiveRules`), where a denial is
 * FORBIDDEN and null at its path. A signed-in caller whose token lacks a scope some selected field needs (`@scope`)
 * is refused whole too, before any record is loaded: what a token may do is its caller's rights and its scopes. The judgement is made once per document (`RouteRules.requirementsOf`), so an
 * operation the server has seen costs a WeakMap lookup; generic-auth's protect-all pass was measured at 0.77x
 * the status path's throughput and is not used for this (docs/architecture.md).
 */
export function useRouteRules<Context>(options: RouteRulesOptions<Context>) {
  const { rules, isGuest, refusal, grantedScopes, scopeRefusal } = options;
  /** The scopes of `required` the caller lacks (none when scopes do not restrict it). */
  const missingScopes = (context: Context, required: readonly string[]): readonly string[] => {
    const granted = required.length > 0 && grantedScopes ? grantedScopes(context) : null;
    return granted === null ? [] : required.filter((scope) => !granted.has(scope));
  };
  const check = ({ args, setResultAndStopExecution }: OperationPayload<Context>): void => {
    const requirements = rules.requirementsOf(args.schema, args.document, args.operationName);
    if (isGuest(args.contextValue)) {
      if (requirements.signIn) setResultAndStopExecution({ errors: [refusal(args.contextValue)] });
      return;
    }
    const missing = missingScopes(args.contextValue, requirements.scopes);
    if (missing.length > 0 && scopeRefusal) setResultAndStopExecution({ errors: [scopeRefusal(requirements.scopes, missing)] });
  };
  // Subscriptions are judged like queries when they start.
  return { onExecute: check, onSubscribe: check };
}
