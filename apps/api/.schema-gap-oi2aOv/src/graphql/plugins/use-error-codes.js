import { ErrorCode } from '../errors.js';
/** Yoga's own request errors use its codes; these are renamed into the service's error codes (docs/graphql.md, docs/choices.md). */
const BY_STATUS = {
    405: ErrorCode.METHOD_NOT_ALLOWED,
    413: ErrorCode.PAYLOAD_TOO_LARGE,
    415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
};
const RENAMED = {
    OPERATION_RESOLUTION_FAILURE: ErrorCode.BAD_REQUEST,
    REQUEST_ENTITY_TOO_LARGE: ErrorCode.PAYLOAD_TOO_LARGE,
};
function normalize(error, executed) {
    const extensions = error.extensions;
    const status = extensions.http?.status;
    const code = extensions.code;
    if (code === ErrorCode.BAD_REQUEST && status && BY_STATUS[status])
        extensions.code = BY_STATUS[status];
    else if (code && RENAMED[code])
        extensions.code = RENAMED[code];
    else if ((!code || code === ErrorCode.BAD_USER_INPUT) && !executed && !error.path) {
        // Variable coercion failures come without a code, before execution: bad client input. Like validation
        // failures they are 400 under graphql-response+json and 200 under application/json (spec status table).
        extensions.code = ErrorCode.BAD_USER_INPUT;
        extensions.http = { ...extensions.http, status: 400, spec: true };
    }
}
/** Gives every error leaving the server a code from the one vocabulary, once per response. */
export function useErrorCodes({ onError } = {}) {
    const visit = (result) => {
        if (!result.errors)
            return;
        const executed = 'data' in result;
        for (const error of result.errors) {
            normalize(error, executed);
            onError?.(error.extensions.code);
        }
    };
    return {
        onResultProcess({ result }) {
            if (Array.isArray(result))
                for (const item of result)
                    visit(item);
            else if (result && typeof result === 'object' && 'errors' in result)
                visit(result);
        },
    };
}
//# sourceMappingURL=use-error-codes.js.map