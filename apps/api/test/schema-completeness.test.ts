import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generate, type CodegenConfig } from '@graphql-codegen/cli';
import { buildSchema as buildSdl } from 'graphql';
import type ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedPgliteDataDir, testTempDir } from '@latchkey/db/testing';
import { MODEL_SERVED_FIELDS } from '../src/generated/model-served.js';
import { resolverGaps } from '../src/graphql/completeness.js';

// A schema field the code does not serve fails typecheck (naming Type.field) and stops
// start-up. These tests change the schema and the models in memory (codegen without writing, the TypeScript
// checker over an overlay of files) and, for start-up, in a copy of the build: the checkout is never touched.

const API = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = resolve(API, '../..');
const RESOLVERS_TS = join(API, 'src/generated/resolvers.ts');
const require = createRequire(import.meta.url);
const { createOverlayProgram, modelServedFields, probeProgram, codegenInputGaps } = require('../codegen/model-served.cjs') as {
  createOverlayProgram(rootNames: string[], overlay: Map<string, string>): ts.Program;
  modelServedFields(overlay: Map<string, string>): string[];
  probeProgram(overlay?: Map<string, string>): ts.Program;
  codegenInputGaps(program: ts.Program): string[];
};
const typescript = require('typescript') as typeof ts;

const schemaFiles = Object.fromEntries(
  readdirSync(join(ROOT, 'schema'))
    .filter((name) => name.endsWith('.graphql'))
    .map((name) => [name, readFileSync(join(ROOT, 'schema', name), 'utf8')]),
);

function changedSchema(file: string, from: string, to: string): Record<string, string> {
  expect(schemaFiles[file]).toContain(from);
  return { ...schemaFiles, [file]: schemaFiles[file]!.replace(from, to) };
}

type Output = CodegenConfig['generates'][string];
let serverOutput: Output;
beforeAll(async () => {
  process.env['CODEGEN_TARGET'] = 'server';
  const config = ((await import(pathToFileURL(join(ROOT, 'codegen.ts')).href)) as { default: CodegenConfig }).default;
  serverOutput = config.generates['apps/api/src/generated/resolvers.ts']!;
});

/** What `pnpm codegen` would write to src/generated/resolvers.ts for these schema files (nothing is written). */
async function generatedResolverTypes(schema: Record<string, string>): Promise<string> {
  const outputs = await generate(
    { cwd: ROOT, schema: Object.values(schema), generates: { 'apps/api/src/generated/resolvers.ts': serverOutput }, silent: true },
    false,
  );
  return (outputs as { content: string }[])[0]!.content;
}

/** What `pnpm typecheck` says of apps/api/src with these files replaced: `file: [code it points at] message` each. */
function typecheck(overlay: Map<string, string>): string[] {
  const program = createOverlayProgram([join(API, 'src/main.ts'), join(API, 'src/cli.ts')], overlay);
  return program
    .getSourceFiles()
    .filter((file) => file.fileName.startsWith(join(API, 'src')))
    .flatMap((file) => program.getSemanticDiagnostics(file))
    .map((diagnostic) => {
      const at = diagnostic.file?.text.slice(diagnostic.start, (diagnostic.start ?? 0) + (diagnostic.length ?? 0));
      return `${diagnostic.file?.fileName.slice(API.length + 1)}: [${at}] ${typescript.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
    });
}

const STATUS_RESOLVERS = join(API, 'src/graphql/resolvers/status.ts');
/** The Status model (StatusSource, an empty record today) given `uptimeSeconds` of this type, and its one producer too. */
function statusModelWith(type: string): string {
  const text = readFileSync(STATUS_RESOLVERS, 'utf8');
  const model = 'export type StatusSource = Record<string, never>;';
  const value = 'const STATUS: StatusSource = {};';
  expect(text).toContain(model);
  expect(text).toContain(value);
  return text
    .replace(model, `export type StatusSource = { uptimeSeconds: ${type} };`)
    .replace(value, 'const STATUS: StatusSource = { uptimeSeconds: 1 };');
}

describe('a schema change the code does not implement', () => {
  it('the schema as it stands: codegen in memory writes the committed resolver types (which pnpm typecheck checks, before the tests), and every field is served', async () => {
    const generated = await generatedResolverTypes(schemaFiles);
    expect(generated).toBe(readFileSync(RESOLVERS_TS, 'utf8'));
    expect(modelServedFields(new Map([[RESOLVERS_TS, generated]]))).toEqual(MODEL_SERVED_FIELDS);
  }, 120_000);

  it('a new Non-Null field with no resolver and no model property fails typecheck naming Type.field, and start-up finds the same gap', async () => {
    const schema = changedSchema('organizations.graphql', '  plan: Plan!\n', '  plan: Plan!\n  memberCount: Int!\n');
    const overlay = new Map([[RESOLVERS_TS, await generatedResolverTypes(schema)]]);
    const messages = typecheck(overlay);
    expect(messages.join('\n')).toContain('Organization.memberCount');
    expect(messages).toHaveLength(1);
    const served = modelServedFields(overlay);
    expect(served).not.toContain('Organization.memberCount');
    // Start-up's check on the same schema with the real resolvers and the list codegen would write.
    const { buildSchema, resolverMaps } = await import('../src/graphql/schema.js');
    expect(() => buildSchema()).not.toThrow();
    expect(resolverGaps(buildSdl(Object.values(schema).join('\n')), resolverMaps, served)).toEqual(['Organization.memberCount']);
  }, 120_000);

  it('a new field served by the mapped model (a property whose type fits) passes typecheck and needs no resolver', async () => {
    const schema = changedSchema('status.graphql', '  serverTime: DateTime!\n', '  serverTime: DateTime!\n  uptimeSeconds: Int!\n');
    const overlay = new Map([
      [RESOLVERS_TS, await generatedResolverTypes(schema)],
      [STATUS_RESOLVERS, statusModelWith('number')],
    ]);
    expect(typecheck(overlay)).toEqual([]);
    expect(modelServedFields(overlay)).toContain('Status.uptimeSeconds');
  }, 120_000);

  it('a nullable model property behind a Non-Null field does not fit: typecheck fails naming Type.field', async () => {
    const schema = changedSchema('status.graphql', '  serverTime: DateTime!\n', '  serverTime: DateTime!\n  uptimeSeconds: Int!\n');
    const overlay = new Map([
      [RESOLVERS_TS, await generatedResolverTypes(schema)],
      [STATUS_RESOLVERS, statusModelWith('number | null')],
    ]);
    const messages = typecheck(overlay);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(`'"Status.uptimeSeconds: no resolver and no fitting model property"'`);
    expect(modelServedFields(overlay)).not.toContain('Status.uptimeSeconds');
  }, 120_000);

  it('an argument whose type changes fails typecheck where the resolver uses it, naming the argument', async () => {
    const schema = changedSchema('documents.graphql', 'first: Int = 20', 'first: String = "20"');
    const messages = typecheck(new Map([[RESOLVERS_TS, await generatedResolverTypes(schema)]]));
    expect(messages).toEqual([
      expect.stringMatching(/^src\/graphql\/resolvers\/documents\.ts: \[first\] Type 'string' is not assignable to type 'number'/),
    ]);
  }, 120_000);

  it("codegen's task declares what the model list depends on: a model importing a new file is named until it is an input", () => {
    expect(codegenInputGaps(probeProgram())).toEqual([]);
    // The Status model, now built from a type in a file of its own.
    const uptime = join(API, 'src/graphql/resolvers/uptime.ts');
    const model = 'export type StatusSource = Record<string, never>;';
    const status = readFileSync(STATUS_RESOLVERS, 'utf8');
    expect(status).toContain(model);
    const overlay = new Map([
      [uptime, 'export type Uptime = { uptimeSeconds: number };\n'],
      [STATUS_RESOLVERS, `import type { Uptime } from './uptime.js';\n${status.replace(model, 'export type StatusSource = Uptime;')}`],
    ]);
    expect(codegenInputGaps(probeProgram(overlay))).toEqual([
      "the models read src/graphql/resolvers/uptime.ts: add it to the codegen task's inputs in apps/api/turbo.json",
    ]);
  }, 120_000);

  it('a build made without typecheck refuses to start: exit 1 naming each Type.field, no stack trace', () => {
    // A copy of the build beside the real one (so its imports resolve), with the schema it carries changed.
    const copy = mkdtempSync(join(API, '.schema-gap-'));
    const data = testTempDir('gap');
    seedPgliteDataDir(data);
    try {
      cpSync(join(API, 'dist'), copy, { recursive: true });
      const typeDefs = join(copy, 'src/generated/type-defs.js');
      const text = readFileSync(typeDefs, 'utf8');
      expect(text).toContain('plan: Plan!\\n');
      writeFileSync(typeDefs, text.replace('plan: Plan!\\n', 'plan: Plan!\\n  memberCount: Int!\\n  seats: [String!]!\\n'));
      const result = spawnSync(process.execPath, [join(copy, 'src/main.js')], {
        env: { ...process.env, NODE_ENV: 'development', PORT: '0', DATA_DIR: data, DATABASE_URL: '', LOG_LEVEL: 'error' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('Organization.memberCount');
      expect(result.stderr).toContain('Organization.seats');
      expect(result.stderr).not.toMatch(/\n\s+at /);
    } finally {
      rmSync(copy, { recursive: true, force: true });
      rmSync(data, { recursive: true, force: true });
    }
  }, 90_000);
});

afterAll(() => {
  delete process.env['CODEGEN_TARGET'];
});
