import { printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { clientView, schemaOfSources, type SourceError } from './schema-source.js';

const refusal = (build: () => unknown) => {
  try {
    build();
  } catch (error) {
    return error as SourceError;
  }
  throw new Error('expected a SourceError');
};

describe('a schema from SDL files', () => {
  it('builds types and extensions spread over files', () => {
    const schema = schemaOfSources([
      { name: 'schema/a.graphql', body: 'type Query { a: Int }' },
      { name: 'schema/b.graphql', body: 'extend type Query { b: String }' },
    ]);
    expect(Object.keys(schema.getQueryType()!.getFields())).toEqual(['a', 'b']);
  });

  it('names the file, line and column of a syntax error, and of each SDL rule broken', () => {
    const syntax = refusal(() => schemaOfSources([{ name: 'schema/a.graphql', body: 'type Query {\n  a: Int\n  b Int\n}' }]));
    expect(syntax.code).toBe('SCHEMA_INVALID');
    expect(syntax.message).toContain('schema/a.graphql:3:5: Syntax Error: Expected ":", found Name "Int".');
    const unknown = refusal(() =>
      schemaOfSources([
        { name: 'schema/a.graphql', body: 'type Query { a: Int }' },
        { name: 'schema/b.graphql', body: '\nextend type Query { b: Missing }' },
      ]),
    );
    expect(unknown.message).toContain('schema/b.graphql:2:24: Unknown type "Missing".');
  });

  it("the client's view keeps descriptions and deprecations and leaves the server's own directives out, sorted", () => {
    const schema = schemaOfSources([
      {
        name: 'schema/a.graphql',
        body: 'directive @auth on FIELD_DEFINITION\ntype Query { "Z." z: Int @auth\n a: Int @deprecated(reason: "Gone.") }',
      },
    ]);
    expect(printSchema(clientView(schema))).toBe('type Query {\n  a: Int @deprecated(reason: "Gone.")\n\n  """Z."""\n  z: Int\n}');
  });
});
