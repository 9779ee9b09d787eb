import { OIDC_ROUTES } from '@latchkey/auth';

/** Paths under a prefix that stand for a family of requests, each one label. */
const PREFIXES: readonly [prefix: string, template: string][] = [
  ['/interaction/', '/interaction/:uid'],
  // The provider resumes an authorization at /oidc/auth/<uid> after the interaction.
  ['/oidc/auth/', '/oidc/auth/:uid'],
  ['/oidc/', '/oidc/*'],
  ['/client/', '/client/*'],
];

/**
 * The route template of a request path, for metrics: one of a fixed set derived from the router (exact paths as
 * they are, `/api/documents/:id` from the REST routes, `/interaction/:uid`, `/oidc/*` for the provider's other
 * paths), `other` for anything else. Never the path itself: label values must not come from the client.
 */
export function createRouteTemplates(exactPaths: Iterable<string>, restTemplateOf: (path: string) => string | undefined) {
  const exact = new Set<string>([
    ...exactPaths,
    ...Object.values(OIDC_ROUTES),
    '/.well-known/openid-configuration',
    '/oidc/session/end/confirm',
    '/oidc/session/end/success',
  ]);
  return function routeTemplate(path: string): string {
    if (exact.has(path)) return path;
    if (path.startsWith('/api/')) return restTemplateOf(path) ?? 'other';
    for (const [prefix, template] of PREFIXES) if (path.startsWith(prefix)) return template;
    return 'other';
  };
}
