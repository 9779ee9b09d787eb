import { isDatabaseUnavailable } from '@latchkey/db';
import { GraphQLError } from 'graphql';
import { isDomainError } from '../../domain/errors.js';
function logUnexpected(logger, result, requestId) {
    for (const error of result.errors ?? []) {
        const original = error.originalError;
        // Domain failures (NOT_FOUND, BAD_USER_INPUT) are answers, not faults.
        if (!original || original instanceof GraphQLError || isDomainError(original))
            continue;
        // An outage is the environment's fault, not a bug: one short line, no stack.
        if (isDatabaseUnavailable(original))
            logger.warn({ reqId: requestId, path: error.path, reason: original.message }, 'database unavailable');
        else
            logger.error({ reqId: requestId, path: error.path, err: original }, 'resolver failed');
    }
}
/**
 * Logs unexpected resolver failures with the request id, before masking replaces them with
 * INTERNAL_SERVER_ERROR; the client sees only the masked message.
 */
export function useErrorLog(logger) {
    return {
        onExecute({ args }) {
            // Must run inside execution: Yoga's masking (onExecuteDone of a later plugin) drops the original error.
            return {
                onExecuteDone({ result }) {
                    if ('errors' in result && result.errors)
                        logUnexpected(logger, result, args.contextValue.requestId);
                },
            };
        },
    };
}
//# sourceMappingURL=use-error-log.js.map