import { GraphQLError } from 'graphql';
/** graphql-js's suggestions: ` Did you mean "a", "b", or "c"?`, `... the enum value "X"?`, `... to use an inline fragment on "T"?` */
const SUGGESTION = / ?Did you mean [^?]*\?/g;
/** Whether someone may see suggestions under an introspection setting. */
export function suggestionsAllowed(introspection, signedIn) {
    return introspection === 'open' || (introspection === 'signed-in' && signedIn);
}
const suggests = (error) => error.message.includes('Did you mean');
/**
 * The same errors without their "Did you mean ...?" suggestions, which let a tool rebuild a schema whose
 * introspection is refused. New error objects: Yoga's validation cache keeps the originals for callers who may
 * see them. undefined when no error suggests anything.
 */
export function withoutSuggestions(errors) {
    if (!errors.some(suggests))
        return undefined;
    return errors.map((error) => suggests(error)
        ? new GraphQLError(error.message.replace(SUGGESTION, ''), {
            nodes: error.nodes,
            source: error.source,
            positions: error.positions,
            path: error.path,
            originalError: error.originalError,
            extensions: error.extensions,
        })
        : error);
}
/**
 * Validation and variable-coercion messages over HTTP without suggestions where introspection is refused:
 * a guest's under `signed-in`, everyone's under `off` (graphql 16 cannot turn suggestions off; graphql 17's
 * `hideSuggestions` can). Both kinds of failure end as a result with errors and no data, so they are
 * rewritten once, as the result is processed; the caller's token is looked at only then. (WebSocket
 * operations do the same in graphql-ws.ts.)
 */
export function useHiddenSuggestions(options) {
    const { introspection, signedIn } = options;
    if (introspection === 'open')
        return {};
    /** A result with errors and no data (failed validation or coercion) without its suggestions; undefined: unchanged. */
    const hide = (result) => {
        if (!result || typeof result !== 'object' || !('errors' in result) || 'data' in result)
            return undefined;
        const errors = withoutSuggestions(result.errors ?? []);
        return errors && { ...result, errors };
    };
    const hideAll = (results) => {
        const hidden = results.map((result) => hide(result) ?? result);
        return hidden.some((result, index) => result !== results[index]) ? hidden : undefined;
    };
    return {
        onResultProcess({ result, setResult, serverContext }) {
            const hidden = Array.isArray(result) ? hideAll(result) : hide(result);
            if (!hidden)
                return;
            const req = serverContext.req;
            if (introspection === 'off' || !req)
                return void setResult(hidden);
            const allowed = signedIn(req);
            if (allowed instanceof Promise)
                return allowed.then((yes) => void (yes || setResult(hidden)));
            if (!allowed)
                setResult(hidden);
        },
    };
}
//# sourceMappingURL=use-hidden-suggestions.js.map