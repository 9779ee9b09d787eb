import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { RouteRules } from '@latchkey/policy';
import { ErrorCode, unauthenticated } from '../errors.js';
import type { GraphQLContext } from '../context.js';

export interface IntrospectionAccessOptions {
  /**
   * Who may run introspection (`__schema`, `__type`).
   * `open`: anyone; `signed-in`: signed-in callers; `off`: nobody.
   */
  introspection: 'open' | 'signed-in' | 'off';
  /** the route rules (what an operation selects, judged once per document) */
  rules: RouteRules;
  /** the challenge of the operation's refused credential, if one was presented and refused */
  challengeOf: (context: GraphQLContext) => string | undefined;
}

const INTROSPECTION_OFF = () =>
  new GraphQLError('Introspection is disabled on this server.', {
    extensions: { code: ErrorCode.GRAPHQL_VALIDATION_FAILED, http: { status: 400, spec: true } },
  });

/**
 * Introspection at the route level (spec Authorization 7, INTROSPECTION): generic-auth judges the schema's own
 * fields and passes `__schema` and `__type` by, so they are judged here, before it, from the same route rules.
 * `off` refuses them as a validation failure; `signed-in` refuses a guest as the route rule does.
 */
export function useIntrospectionAccess(options: IntrospectionAccessOptions): Plugin<GraphQLContext> {
  if (options.introspection === 'open') return {};
  const check = ({
    args,
    setResultAndStopExecution,
  }: Pick<Parameters<NonNullable<Plugin<GraphQLContext>['onExecute']>>[0], 'args' | 'setResultAndStopExecution'>): void => {
    const { schema, document, operationName, contextValue } = args;
    if (!options.rules.requirementsOf(schema, document, operationName).introspection) return;
    if (options.introspection === 'off') return setResultAndStopExecution({ errors: [INTROSPECTION_OFF()] });
    if (contextValue.caller === null) setResultAndStopExecution({ errors: [unauthenticated(options.challengeOf(contextValue))] });
  };
  // Subscriptions are judged like queries when they start.
  return { onExecute: check, onSubscribe: check };
}
