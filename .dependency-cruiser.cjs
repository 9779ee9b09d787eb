// The layering, as rules that fail CI (`pnpm layers`). Today's violations are listed, by name, in
// .dependency-cruiser-known-violations.json (written with `pnpm layers:baseline`): they may stay until they are
// removed, and nothing new may join them.

/** apps/api, top to bottom: a module may import its own layer and the layers below it, never one above. */
const API_LAYERS = [
  ['entry points', '^apps/api/src/(main|service|service-listeners|cli)\\.ts$|^apps/api/src/commands/'],
  ['server', '^apps/api/src/(server|observability)/'],
  ['graphql, rest, demo', '^apps/api/src/(graphql|rest|demo|generated)/'],
  // The cost budgets' buckets, stores and reports, which GraphQL and REST both charge: below both, so neither the
  // transports import each other through it nor it imports either (each one's adapter lives with its transport).
  ['budgets', '^apps/api/src/budget/'],
  ['events', '^apps/api/src/events/'],
  ['domain', '^apps/api/src/domain/'],
  ['config and logger', '^apps/api/src/(logger|version)\\.ts$|^apps/api/src/config/'],
];

const upward = API_LAYERS.slice(1).map(([name, path], index) => ({
  name: `api-no-upward-import: ${name}`,
  comment: `apps/api layers, top to bottom: ${API_LAYERS.map(([layer]) => layer).join(' -> ')}; ${name} imports none above it`,
  severity: 'error',
  from: { path, pathNot: '\\.test\\.ts$' },
  to: {
    path: API_LAYERS.slice(0, index + 1)
      .map(([, above]) => `(${above})`)
      .join('|'),
  },
}));

/** The workspace packages, bottom to top: a package imports only packages below it (and never an app). */
const PACKAGES = ['errors', 'http', 'policy', 'db', 'persisted', 'schema-contract', 'auth', 'client'];
const BELOW = {
  errors: [],
  http: ['errors'],
  policy: ['errors'],
  db: ['errors'],
  persisted: ['db', 'http', 'errors'],
  'schema-contract': ['errors'],
  auth: ['db', 'http', 'errors'],
  client: [],
};
const downward = PACKAGES.map((name) => ({
  name: `packages-depend-downward: ${name}`,
  comment: `packages/${name} may import ${BELOW[name].length ? BELOW[name].map((b) => `packages/${b}`).join(', ') : 'no other workspace package'}, and never apps/`,
  severity: 'error',
  from: { path: `^packages/${name}/`, pathNot: '\\.test\\.ts$' },
  to: {
    path: '^(packages|apps)/',
    pathNot: [`^packages/${name}/`, ...BELOW[name].map((b) => `^packages/${b}/`)],
  },
}));

module.exports = {
  forbidden: [
    ...upward,
    ...downward,
    {
      name: 'api-no-drizzle',
      comment: 'apps/api reaches the database through the domain services of @latchkey/db, not drizzle-orm itself',
      severity: 'error',
      from: { path: '^apps/api/src/' },
      to: { path: 'node_modules/.*drizzle-orm/' },
    },
    {
      name: 'no-circular',
      comment: 'a cycle makes the layering meaningless',
      severity: 'error',
      from: { pathNot: '\\.test\\.ts$' },
      to: { circular: true },
    },
  ],
  options: {
    // Workspace packages resolve to their builds (dist): seen as the package, not followed into.
    doNotFollow: { path: ['node_modules', '(^|/)dist/'] },
    exclude: { path: '(^|/)generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.depcruise.json' },
    combinedDependencies: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
