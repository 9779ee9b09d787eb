import {
  buildASTSchema,
  buildSchema,
  concatAST,
  DirectiveLocation,
  getLocation,
  GraphQLError,
  GraphQLSchema,
  lexicographicSortSchema,
  parse,
  printSchema,
  Source,
  isSpecifiedDirective,
  validateSchema,
  type DocumentNode,
} from 'graphql';
import { validateSDL } from 'graphql/validation/validate.js';
import { definedErrors } from '@latchkey/errors';

/** One SDL or document file: where it comes from (a path, or `REF:path`) and its text. */
export interface SourceFile {
  readonly name: string;
  readonly body: string;
}

export const SOURCE_ERRORS = {
  SCHEMA_INVALID: (problems: readonly string[]) => `the schema cannot be built:\n  ${problems.join('\n  ')}`,
  DOCUMENT_INVALID: (problems: readonly string[]) => `a document cannot be read:\n  ${problems.join('\n  ')}`,
} as const;

/** SDL or a document that does not parse or build; each problem as `file:line:col: message`. */
export class SourceError extends definedErrors('SourceError', SOURCE_ERRORS) {}

/** `file:line:col: message` for each place a GraphQL error names (its message alone when it names none). */
export function located(error: GraphQLError): string[] {
  const places = error.nodes?.length
    ? error.nodes.flatMap((node) => (node.loc ? [{ name: node.loc.source.name, ...getLocation(node.loc.source, node.loc.start) }] : []))
    : (error.locations ?? []).map((location) => ({ name: error.source?.name ?? 'GraphQL request', ...location }));
  return places.length > 0 ? places.map(({ name, line, column }) => `${name}:${line}:${column}: ${error.message}`) : [error.message];
}

/** Parses one file, naming it in any syntax error. */
export function parseSource(file: SourceFile, code: 'SCHEMA_INVALID' | 'DOCUMENT_INVALID'): DocumentNode {
  try {
    return parse(new Source(file.body, file.name));
  } catch (error) {
    if (error instanceof GraphQLError) throw new SourceError(code, located(error));
    throw error;
  }
}

/**
 * The schema of SDL files (`schema/*.graphql`: types and extensions spread over files), checked as the server checks
 * it. Every problem names its file, line and column.
 */
export function schemaOfSources(files: readonly SourceFile[]): GraphQLSchema {
  const sdl = concatAST(files.map((file) => parseSource(file, 'SCHEMA_INVALID')));
  // Validated here rather than by buildASTSchema, whose error keeps the messages but drops where they are.
  const invalid = validateSDL(sdl).flatMap(located);
  if (invalid.length > 0) throw new SourceError('SCHEMA_INVALID', invalid);
  const schema = buildASTSchema(sdl, { assumeValidSDL: true });
  const problems = validateSchema(schema).flatMap(located);
  if (problems.length > 0) throw new SourceError('SCHEMA_INVALID', problems);
  return schema;
}

const EXECUTABLE_LOCATIONS: ReadonlySet<DirectiveLocation> = new Set([
  DirectiveLocation.QUERY,
  DirectiveLocation.MUTATION,
  DirectiveLocation.SUBSCRIPTION,
  DirectiveLocation.FIELD,
  DirectiveLocation.FRAGMENT_DEFINITION,
  DirectiveLocation.FRAGMENT_SPREAD,
  DirectiveLocation.INLINE_FRAGMENT,
  DirectiveLocation.VARIABLE_DEFINITION,
]);

/**
 * The schema as clients see it, sorted: every type, field, description and deprecation, without the directives that
 * stand only on the schema's own definitions (the server's access rules), which are neither introspected nor part of
 * what a client builds against (a directive a document may carry stays). What `@latchkey/client/schema.graphql` prints
 * (printClientSchema), so a release's printed schema can serve as a base.
 */
export function clientView(schema: GraphQLSchema): GraphQLSchema {
  const directives = schema
    .getDirectives()
    .filter((directive) => isSpecifiedDirective(directive) || directive.locations.some((location) => EXECUTABLE_LOCATIONS.has(location)));
  return lexicographicSortSchema(buildSchema(printSchema(new GraphQLSchema({ ...schema.toConfig(), directives }))));
}

/** The SDL of the schema as clients see it (clientView): the printed `@latchkey/client/schema.graphql`, sorted. */
export function printClientSchema(schema: GraphQLSchema): string {
  return printSchema(clientView(schema));
}
