import { sendHttpError } from '@latchkey/http';
const GET_HEAD = ['GET', 'HEAD'];
/**
 * The demo client's page, script and modules: GET and HEAD only. Anything else, or no demo client, is 404 like
 * any unknown path (they stay routes so that their requests keep their metrics labels).
 */
function demoRoutes(demo) {
    const serve = (send) => (req, res, { path }) => {
        if (demo && (req.method === 'GET' || req.method === 'HEAD') && send(demo, req, res, path))
            return;
        sendHttpError(res, 404, 'Not Found');
    };
    const page = serve((demo, req, res) => {
        demo.sendPage(req, res);
        return true;
    });
    return [
        { path: '/', methods: 'any', handler: page },
        { path: '/callback', methods: 'any', handler: page },
        {
            path: '/demo.js',
            methods: 'any',
            handler: serve((demo, req, res) => {
                demo.sendScript(req, res);
                return true;
            }),
        },
        { path: '/client/*', methods: 'any', handler: serve((demo, req, res, path) => demo.sendClientModule(req, res, path)) },
    ];
}
/** Every route of the main listener: path, methods, handler (docs/architecture.md, "The request path"). */
export function routeTable(parts) {
    return [
        { path: '/graphql', methods: 'any', handler: parts.graphql },
        { path: '/api/*', methods: 'any', handler: (req, res, { path }) => parts.api(req, res, path), templateOf: parts.apiTemplateOf },
        ...parts.authorization,
        { path: '/healthz', methods: GET_HEAD, handler: (_req, res) => parts.probes.health(res) },
        { path: '/readyz', methods: GET_HEAD, handler: (_req, res) => void parts.probes.readiness(res) },
        {
            path: '/.well-known/jwks.json',
            methods: GET_HEAD,
            handler(_req, res) {
                res.writeHead(200, { 'content-type': 'application/jwk-set+json; charset=utf-8', 'cache-control': 'public, max-age=300' });
                res.end(parts.jwksBody);
            },
        },
        ...demoRoutes(parts.demo),
    ];
}
//# sourceMappingURL=routes.js.map