import { GraphQLError } from 'graphql';
import { ErrorCode, unauthenticated } from '../errors.js';
const INTROSPECTION_OFF = () => new GraphQLError('Introspection is disabled on this server.', {
    extensions: { code: ErrorCode.GRAPHQL_VALIDATION_FAILED, http: { status: 400, spec: true } },
});
/**
 * Introspection at the route level (spec Authorization 7, INTROSPECTION): generic-auth judges the schema's own
 * fields and passes `__schema` and `__type` by, so they are judged here, before it, from the same route rules.
 * `off` refuses them as a validation failure; `signed-in` refuses a guest as the route rule does.
 */
export function useIntrospectionAccess(options) {
    if (options.introspection === 'open')
        return {};
    const check = ({ args, setResultAndStopExecution, }) => {
        const { schema, document, operationName, contextValue } = args;
        if (!options.rules.requirementsOf(schema, document, operationName).introspection)
            return;
        if (options.introspection === 'off')
            return setResultAndStopExecution({ errors: [INTROSPECTION_OFF()] });
        if (contextValue.caller === null)
            setResultAndStopExecution({ errors: [unauthenticated(options.credentialRejected(contextValue))] });
    };
    // Subscriptions are judged like queries when they start.
    return { onExecute: check, onSubscribe: check };
}
//# sourceMappingURL=use-introspection-access.js.map