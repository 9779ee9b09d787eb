// Run by `pnpm codegen` after it has written src/generated/resolvers.ts (codegen.ts, hooks.beforeDone).
// Asks the TypeScript checker which schema fields the mapped models serve by themselves (ModelServedField in
// src/graphql/completeness.ts: a property of the field's name whose type fits the field's type) and writes the
// list to src/generated/model-served.ts, so start-up checks the very list typecheck uses.
const { readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const ts = require('typescript');
// The workspace's one error model (an ES module: node 20.19 and later require it as they would CommonJS).
const { CodedError } = require('@latchkey/errors');

const apiDir = path.resolve(__dirname, '..');
const rootDir = path.resolve(apiDir, '../..');
const generatedDir = path.join(apiDir, 'src/generated');
const PROBE = path.join(generatedDir, '__model-served-probe.ts');
const PROBE_TEXT = [
  "import type { ModelServedField } from '../graphql/completeness.js';",
  "import type { ResolversParentTypes } from './resolvers.js';",
  'export declare const served: ModelServedField;',
  // A mapper that does not resolve is `any`, which "fits" every field: name those instead of guessing.
  'export declare const unresolved: { [K in keyof ResolversParentTypes]: 0 extends 1 & ResolversParentTypes[K] ? K : never }[keyof ResolversParentTypes];',
  '',
].join('\n');

/** Why the list could not be written: said to the developer as it is, the one line the script prints. */
class ModelServedError extends CodedError {
  constructor(message) {
    super('ModelServedError', 'MODEL_SERVED_UNKNOWN', message);
  }
}

const apiSrcDir = path.join(apiDir, 'src') + path.sep;
/** Source files outside apps/api/src, parsed once per process (keyed by language version and path). */
const parsedDeclarations = new Map();

/**
 * A program over apps/api with apps/api/tsconfig.json's options, where `overlay` (absolute path -> text) replaces
 * or adds files: the probe here, a changed schema's generated types or model in the tests.
 */
function createOverlayProgram(rootNames, overlay = new Map()) {
  const { config, error } = ts.readConfigFile(path.join(apiDir, 'tsconfig.json'), ts.sys.readFile);
  if (error) throw new ModelServedError(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, apiDir);
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, ...rest) => {
    const resolved = path.resolve(fileName);
    const text = overlay.get(resolved);
    if (text !== undefined) return ts.createSourceFile(fileName, text, languageVersion, true);
    // Declarations outside apps/api (TypeScript's lib, node_modules, the packages' builds) do not change while a
    // process runs: parsed once, shared by every program it makes (the tests make a dozen).
    if (resolved.startsWith(apiSrcDir)) return getSourceFile(fileName, languageVersion, ...rest);
    const version =
      typeof languageVersion === 'object' ? `${languageVersion.languageVersion}/${languageVersion.impliedNodeFormat}` : languageVersion;
    const key = `${version}:${resolved}`;
    let parsed = parsedDeclarations.get(key);
    if (!parsed) parsedDeclarations.set(key, (parsed = getSourceFile(fileName, languageVersion, ...rest)));
    return parsed;
  };
  host.fileExists = (fileName) => overlay.has(path.resolve(fileName)) || fileExists(fileName);
  host.readFile = (fileName) => overlay.get(path.resolve(fileName)) ?? readFile(fileName);
  return ts.createProgram({ rootNames, options, host });
}

/** The program the probe is checked in: the generated resolver types, the mapped models and all they import. */
function probeProgram(overlay = new Map()) {
  return createOverlayProgram([PROBE], new Map([...overlay, [PROBE, PROBE_TEXT]]));
}

/** `Type.field` for every field the mapped models serve by themselves, sorted. */
function modelServedFields(overlay = new Map(), program = probeProgram(overlay)) {
  const checker = program.getTypeChecker();
  const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(PROBE)));
  const literals = (name) => {
    const type = checker.getTypeOfSymbol(exported.find((symbol) => symbol.name === name));
    const members = type.flags & ts.TypeFlags.Never ? [] : type.isUnion() ? type.types : [type];
    return members.map((member) => {
      if (!member.isStringLiteral()) throw new ModelServedError(`${name} is not a union of string literals: ${checker.typeToString(type)}`);
      return member.value;
    });
  };
  const unresolved = literals('unresolved');
  if (unresolved.length > 0)
    throw new ModelServedError(`the models of ${unresolved.join(', ')} do not resolve (build the workspace packages first)`);
  return literals('served').sort();
}

/**
 * What the list depends on, against what apps/api/turbo.json's `codegen` task declares, so turbo re-runs codegen
 * whenever the list could change and never otherwise: every apps/api source the program reads is one of the
 * task's `inputs` (and every `src/` input is read), and every workspace package whose declarations it reads is
 * built first (`dependsOn`, whose build hashes turbo folds into the task's). Answers the mismatches as sentences.
 */
function codegenInputGaps(program) {
  const task = JSON.parse(readFileSync(path.join(apiDir, 'turbo.json'), 'utf8')).tasks.codegen;
  const listed = new Set(task.inputs.filter((input) => input.startsWith('src/')));
  const read = new Set();
  const packages = new Set();
  for (const { fileName } of program.getSourceFiles()) {
    const fromApi = path.relative(apiDir, fileName).split(path.sep).join('/');
    if (fromApi.startsWith('src/') && !fromApi.startsWith('src/generated/')) read.add(fromApi);
    const workspace = /^packages\/([^/]+)\/dist\//.exec(path.relative(rootDir, fileName).split(path.sep).join('/'));
    if (workspace) packages.add(JSON.parse(readFileSync(path.join(rootDir, 'packages', workspace[1], 'package.json'), 'utf8')).name);
  }
  return [
    ...[...read]
      .filter((file) => !listed.has(file))
      .map((file) => `the models read ${file}: add it to the codegen task's inputs in apps/api/turbo.json`),
    ...[...listed]
      .filter((file) => !read.has(file))
      .map((file) => `the models no longer read ${file}: remove it from the codegen task's inputs in apps/api/turbo.json`),
    ...[...packages]
      .filter((name) => !task.dependsOn.includes(`${name}#build`))
      .map((name) => `the models read ${name}'s declarations: add "${name}#build" to the codegen task's dependsOn in apps/api/turbo.json`),
  ];
}

function writeModelServed() {
  const program = probeProgram();
  const gaps = codegenInputGaps(program);
  if (gaps.length > 0) throw new ModelServedError(gaps.join('\n'));
  writeFileSync(
    path.join(generatedDir, 'model-served.ts'),
    [
      '/* Generated by `pnpm codegen` (apps/api/codegen/model-served.cjs). Do not edit. */',
      '/** The schema fields the mapped models serve by themselves: no resolver needed (ModelServedField). */',
      `export const MODEL_SERVED_FIELDS: readonly string[] = ${JSON.stringify(modelServedFields(new Map(), program), null, 2)};`,
      '',
    ].join('\n'),
  );
}

module.exports = { createOverlayProgram, modelServedFields, probeProgram, codegenInputGaps };

if (require.main === module) {
  try {
    writeModelServed();
  } catch (error) {
    process.stderr.write(`model-served: ${error instanceof ModelServedError ? error.message : error.stack}\n`);
    process.exit(1);
  }
}
