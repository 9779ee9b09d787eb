import { badRequest } from '../errors.js';
const STREAM_NOT_ACCEPTED = 'This operation answers in parts (@defer, @stream or a subscription): send Accept: multipart/mixed or text/event-stream.';
const KNOWN = new Set(['query', 'variables', 'operationName', 'extensions', 'documentId']);
function jsonParameter(search, name) {
    const raw = search.get(name);
    if (!raw)
        return undefined;
    try {
        return JSON.parse(raw);
    }
    catch {
        throw badRequest(`Parameter "${name}" must be a JSON-encoded object.`);
    }
}
function parseGetRequest(request) {
    const url = request.url;
    const start = url.indexOf('?');
    const search = new URLSearchParams(start < 0 ? '' : url.slice(start + 1));
    return {
        query: search.get('query') ?? undefined,
        operationName: search.get('operationName') ?? undefined,
        variables: jsonParameter(search, 'variables'),
        extensions: jsonParameter(search, 'extensions'),
        // The GraphQL-over-HTTP draft's trusted-document id (read by the persisted-operations plugin).
        ...(search.has('documentId') ? { documentId: search.get('documentId') } : {}),
    };
}
function kind(value) {
    if (value === null)
        return 'null';
    if (Array.isArray(value))
        return 'array';
    return typeof value;
}
/**
 * GraphQL-over-HTTP request parameters, checked strictly. A request without a string `query` is not
 * well-formed and gets 400 under both media types (Yoga would answer 200 under application/json; the
 * GraphQL-over-HTTP spec and graphql-http's audits say 400). Runs per entry of a batch, so one bad entry
 * does not spoil the others.
 */
export function useStrictParams() {
    return {
        // Replaces Yoga's GET parser, which lets a JSON.parse failure of `variables` escape as a 500.
        onRequestParse({ request, setRequestParser }) {
            if (request.method === 'GET')
                setRequestParser(parseGetRequest);
        },
        // An empty batch would be answered `[]` with 200. Checked on the (rare) empty result rather than with
        // an onRequestParseDone hook, which would add a promise step to every POST.
        onResultProcess({ result, setResult, resultProcessor, setResultProcessor }) {
            if (Array.isArray(result) && result.length === 0) {
                setResult({ errors: [badRequest('An empty batch has nothing to execute.')] });
            }
            // A streamed result (@defer/@stream, a subscription) for a client that accepts only single JSON answers:
            // Yoga would answer an empty 406; say why, in the error format.
            if (!resultProcessor && result && typeof result === 'object' && Symbol.asyncIterator in result) {
                setResultProcessor((_result, fetchAPI) => {
                    const body = JSON.stringify({ errors: [{ message: STREAM_NOT_ACCEPTED, extensions: { code: 'BAD_REQUEST' } }] });
                    return new fetchAPI.Response(body, { status: 406, headers: { 'content-type': 'application/json; charset=utf-8' } });
                }, 'application/json');
            }
        },
        onParams({ params }) {
            const given = params;
            if (kind(given) !== 'object')
                throw badRequest(`Each request must be a JSON object, not ${kind(given)}.`);
            for (const key of Object.keys(params)) {
                if (!KNOWN.has(key))
                    throw badRequest(`Unexpected parameter "${key}" (allowed: query, variables, operationName, extensions, documentId).`);
            }
            // A persisted operation's text has been filled in by the persisted-operations plugin (which runs first).
            if (params.query == null)
                throw badRequest('Missing parameter "query" (or a persisted operation\'s id).');
            if (typeof params.query !== 'string')
                throw badRequest(`Parameter "query" must be a string, not ${kind(params.query)}.`);
            if (params.operationName != null && typeof params.operationName !== 'string') {
                throw badRequest('Parameter "operationName" must be a string.');
            }
            for (const key of ['variables', 'extensions']) {
                const type = kind(params[key]);
                if (type !== 'object' && type !== 'null' && type !== 'undefined') {
                    throw badRequest(`Parameter "${key}" must be a JSON object, not ${type}.`);
                }
            }
        },
    };
}
//# sourceMappingURL=use-strict-params.js.map