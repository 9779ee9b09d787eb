import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { persistedOperations, seedDemoData } from '@latchkey/db';
import { createOwnDatabase, testTempDir } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, requireBuild, run, runProgram } from './support/built-cli.js';
import { demoOf } from './support/demo.js';
import {
  expectSuccess,
  packClient,
  pnpm,
  tarballEntries,
  UNREACHABLE_REGISTRY,
  WORKSPACE,
  workspaceRootAbove,
  writeOutsideProject,
} from './support/outside-project.js';
import { databaseKind, serviceDataDir, startTestService, type TestService } from './support/service.js';

// The published contract, end to end: an app in another repository installs the packed @latchkey/client (no
// network), generates its own typed operation from the printed schema with the codegen.ts of docs/clients.md,
// type-checks against the client's declarations, has its manifest imported by the operator CLI, and runs its
// operation by id against a server in allowlist mode, from its own node_modules.

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The app's codegen.ts: the one docs/clients.md gives (the fenced block that starts `// codegen.ts`), as written. */
const DOCUMENTED_CODEGEN = (() => {
  const docs = readFileSync(path.join(WORKSPACE, 'docs/clients.md'), 'utf8');
  const block = /```ts\n(\/\/ codegen\.ts\n[\s\S]*?)```/.exec(docs)?.[1];
  if (!block) throw new Error('docs/clients.md has no ```ts block starting with `// codegen.ts`');
  return block;
})();

const OPERATION = `query OutsideStatus {
  status {
    service
    version
  }
  documents(first: 2) {
    edges {
      node {
        title
      }
    }
  }
}
`;

// Strict settings, the library declarations checked too (skipLibCheck off), no ambient types from node_modules/@types.
const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2022', 'DOM'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    skipLibCheck: false,
    types: [],
    rootDir: 'src',
    outDir: 'dist',
    noEmitOnError: true,
  },
  include: ['src'],
};

const APP = `import { createClient, type PersistedMode } from '@latchkey/client';
import { OutsideStatusDocument } from './gql/graphql.js';

/** The service and the titles of the caller's first two documents, sent the way \`persisted\` says. */
export async function outsideStatus(url: string, token: string, persisted: PersistedMode) {
  const client = createClient({ url, persisted, clientName: 'outside-app', getAccessToken: () => token });
  const { status, documents } = await client.request(OutsideStatusDocument);
  const titles: string[] = documents.edges.map((edge) => edge.node.title);
  // @ts-expect-error: version is a string. Were the generated types or the client's declarations lost (any), this
  // line would be no error, and tsc fails on an unused @ts-expect-error.
  const version: number = status.version;
  return { service: status.service, version, titles };
}
`;

// Plain JavaScript run by node in the app's directory: module resolution is the app's own node_modules.
const RUN = `import { fileURLToPath } from 'node:url';
import { outsideStatus } from './dist/app.js';

const url = process.env.LATCHKEY_GRAPHQL_URL;
const token = process.env.LATCHKEY_TOKEN;
const trusted = await outsideStatus(url, token, 'trusted');
const asText = await outsideStatus(url, token, 'off').then(
  () => ({ refused: false }),
  (error) => ({ refused: true, name: error.name, code: error.code, status: error.status }),
);
const exports = ['@latchkey/client', '@latchkey/client/schema.graphql', '@latchkey/client/persisted-documents.json', '@latchkey/client/package.json'];
const resolved = Object.fromEntries(exports.map((specifier) => [specifier, fileURLToPath(import.meta.resolve(specifier))]));
process.stdout.write(JSON.stringify({ trusted, asText, resolved }));
`;

describe('an app in another repository: the packed @latchkey/client, installed offline, its own operation generated from the printed schema, imported and run by id', () => {
  requireBuild();
  let work: string;
  let app: string;
  let tarball: string;
  let service: TestService | undefined;
  let dropDatabase: (() => Promise<void>) | undefined;
  const dataDirs: string[] = [];
  beforeAll(() => {
    work = testTempDir('outside');
    app = path.join(work, 'outside-app');
    mkdirSync(path.join(app, 'src/operations'), { recursive: true });
    mkdirSync(path.join(work, 'pack'));
  });
  afterAll(async () => {
    await service?.stop();
    await dropDatabase?.();
    for (const dir of [work, ...dataDirs]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('pnpm pack: dist (modules and declarations), the printed schema, the manifest and LICENSE; no examples, tests, maps or build info', async () => {
    tarball = await packClient(path.join(work, 'pack'));
    const entries = (await tarballEntries(tarball)).map((entry) => entry.replace(/^package\//, '')).sort();
    expect(entries).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'package.json',
        'schema.graphql',
        'src/generated/persisted-documents.json',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/client.js',
        'dist/generated/graphql.js',
        'dist/generated/graphql.d.ts',
      ]),
    );
    // Everything else is a module or declaration of dist/ built from a source of the package, and none of these.
    const others = entries.filter(
      (entry) => !['LICENSE', 'package.json', 'schema.graphql', 'src/generated/persisted-documents.json'].includes(entry),
    );
    for (const entry of others) {
      expect(entry, `${entry} should not be in the tarball`).toMatch(/^dist\/[\w/-]+(\.js|\.d\.ts)$/);
      expect(entry).not.toMatch(/examples|\.test\.|\.map$|tsbuildinfo/);
      const source = path.join(WORKSPACE, 'packages/client/src', entry.replace(/^dist\//, '').replace(/(\.d\.ts|\.js)$/, '.ts'));
      expect(() => readFileSync(source), `${entry} has no source in packages/client/src (a leftover of an earlier build?)`).not.toThrow();
    }
    expect(readFileSync(path.join(WORKSPACE, 'packages/client/schema.graphql'), 'utf8')).toMatch(/^type Query \{$/m);
  }, 60_000);

  it('installs in a project outside every workspace with no network (the workspace versions of the tools, from the pnpm store); its modules import only each other', async () => {
    expect(workspaceRootAbove(app), 'the app must not be inside a pnpm workspace').toBeUndefined();
    await writeOutsideProject(app, tarball, [
      '@graphql-codegen/cli',
      '@graphql-codegen/client-preset',
      '@graphql-typed-document-node/core',
      'graphql',
      'typescript',
    ]);
    const store = expectSuccess('pnpm store path', await pnpm(['store', 'path'], WORKSPACE)).stdout.trim();
    // The registry pnpm sees there is the closed port: a request for anything not in the store would fail.
    expect(expectSuccess('pnpm config get registry', await pnpm(['config', 'get', 'registry'], app)).stdout.trim()).toBe(
      UNREACHABLE_REGISTRY,
    );
    const install = expectSuccess(
      'pnpm install --offline in the app',
      await pnpm(['install', '--offline', '--frozen-lockfile', '--store-dir', store], app, 180_000),
    );
    expect(install.stdout).toMatch(/@latchkey\/client 0\.1\.0/);
    const installed = JSON.parse(readFileSync(path.join(app, 'node_modules/@latchkey/client/package.json'), 'utf8'));
    expect(installed).toMatchObject({ name: '@latchkey/client', license: 'MIT', sideEffects: false });
    expect(installed.private).toBeUndefined();
    expect(Object.keys(installed.dependencies)).toEqual(['@graphql-typed-document-node/core']);
    // Its modules import only each other: nothing of graphql (or of any package) at run time, so a browser loads
    // them as they are, and the dependency above is for the declarations alone.
    const dist = path.join(app, 'node_modules/@latchkey/client/dist');
    const modules = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.js'));
    expect(modules).toContain('index.js');
    for (const file of modules) {
      const specifiers = [...readFileSync(path.join(dist, file), 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map(
        (m) => m[1],
      );
      for (const specifier of specifiers) expect(specifier, `${file} imports ${specifier}`).toMatch(/^\.\.?\//);
    }
  }, 240_000);

  it('codegen (client preset, the codegen.ts of docs/clients.md) against the installed schema writes sha256 ids; tsc checks the app against the declarations', async () => {
    writeFileSync(path.join(app, 'codegen.ts'), DOCUMENTED_CODEGEN);
    writeFileSync(path.join(app, 'src/operations/outside-status.graphql'), OPERATION);
    writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
    writeFileSync(path.join(app, 'src/app.ts'), APP);
    writeFileSync(path.join(app, 'run.mjs'), RUN);
    const bin = (name: string) => path.join(app, 'node_modules/.bin', name);
    expectSuccess(
      'graphql-codegen in the app',
      await runProgram(bin('graphql-codegen'), ['--config', 'codegen.ts'], { HOME: process.env['HOME'] }, app, 120_000),
    );
    const manifest = JSON.parse(readFileSync(path.join(app, 'src/gql/persisted-documents.json'), 'utf8')) as Record<string, string>;
    expect(Object.keys(manifest)).toHaveLength(1);
    for (const [id, text] of Object.entries(manifest)) {
      expect(id).toBe(`sha256:${sha256(text)}`);
      expect(text).toMatch(/^query OutsideStatus \{/);
    }
    // tsc checks (strict, library declarations included) and emits only when nothing is wrong.
    expectSuccess('tsc in the app', await runProgram(bin('tsc'), ['-p', 'tsconfig.json'], {}, app, 120_000));
  }, 240_000);

  it('the operator imports its manifest; the app runs its operation by id from its own node_modules; query text is refused', async () => {
    // The import comes first: the embedded database serves one process at a time (on PostgreSQL it could run beside).
    const dataDir = serviceDataDir('outside-service');
    dataDirs.push(dataDir);
    const own = databaseKind === 'postgres' ? await createOwnDatabase(process.env['DATABASE_URL']!) : undefined;
    dropDatabase = own?.drop;
    const manifestFile = path.join(app, 'src/gql/persisted-documents.json');
    const [[id, text]] = Object.entries(JSON.parse(readFileSync(manifestFile, 'utf8')) as Record<string, string>) as [[string, string]];
    const cliEnv = { NODE_ENV: 'test', DATA_DIR: dataDir, DATABASE_URL: own?.url };
    expectSuccess(
      'latchkey persisted import',
      await run(CLI, ['persisted', 'import', manifestFile, '--app', 'outside-app', '--version', '1.0.0'], cliEnv, work),
    );
    const appVersions = expectSuccess('latchkey persisted apps', await run(CLI, ['persisted', 'apps'], cliEnv, work));
    expect(
      appVersions.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
    ).toEqual([expect.objectContaining({ app: 'outside-app', version: '1.0.0', status: 'active', documents: 1 })]);

    service = await startTestService({ PERSISTED_MODE: 'allowlist', DATA_DIR: dataDir, DATABASE_URL: own?.url });
    const rows = await service.database.db.select().from(persistedOperations);
    expect(rows.find((row) => row.hash === id.replace(/^sha256:/, ''))).toMatchObject({ source: 'allowlist', query: text });
    await seedDemoData(service.database);
    const demo = await demoOf(service);

    const result = await run(
      path.join(app, 'run.mjs'),
      [],
      { LATCHKEY_GRAPHQL_URL: service.graphqlUrl, LATCHKEY_TOKEN: await demo.token('alice') },
      app,
    );
    const answer = JSON.parse(expectSuccess('node run.mjs in the app', result).stdout);
    expect(answer.trusted).toMatchObject({ service: 'latchkey', version: '0.1.0-test' });
    expect(answer.trusted.titles).toHaveLength(2);
    for (const title of answer.trusted.titles) expect(demo.documentId.has(title), `${title} is a seeded document`).toBe(true);
    expect(answer.asText).toEqual({ refused: true, name: 'GraphQLRequestError', code: 'PERSISTED_QUERY_NOT_ALLOWED', status: 400 });
    const appRoot = realpathSync(app);
    for (const [specifier, file] of Object.entries(answer.resolved as Record<string, string>)) {
      expect(file.startsWith(`${appRoot}/node_modules/`), `${specifier} resolved to ${file}`).toBe(true);
    }
  }, 120_000);
});
