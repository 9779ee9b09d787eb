/**
 * CORS from an allow-list (spec Endpoints, OPTIONS row). An allowed origin is echoed; any other gets no
 * Access-Control-Allow-Origin at all (never "*", never "null"), so the browser withholds the response.
 * No credentials mode: the API takes bearer tokens, not cookies.
 */
export function createCors({ origins, maxAgeSeconds = 600 }) {
    const maxAge = String(maxAgeSeconds);
    return {
        /** Adds the headers for a simple/actual request. Always Vary: Origin, since the answer depends on it. */
        apply(req, res) {
            const origin = req.headers.origin;
            res.setHeader('vary', 'Origin');
            if (origin !== undefined && origins.has(origin)) {
                res.setHeader('access-control-allow-origin', origin);
                res.setHeader('access-control-expose-headers', 'x-request-id, www-authenticate');
            }
        },
        /** Answers a preflight: 204 in every case; only an allowed origin gets the allow headers. */
        preflight(req, res) {
            const origin = req.headers.origin;
            const headers = {
                vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
                allow: 'GET, POST, OPTIONS',
                'content-length': '0',
            };
            if (origin !== undefined && origins.has(origin)) {
                headers['access-control-allow-origin'] = origin;
                headers['access-control-allow-methods'] = 'POST, GET';
                headers['access-control-allow-headers'] = 'content-type, authorization';
                headers['access-control-max-age'] = maxAge;
            }
            res.writeHead(204, headers);
            res.end();
        },
    };
}
//# sourceMappingURL=cors.js.map