import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { buildSchema, type GraphQLSchema, isInputObjectType, isInterfaceType, isObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';

// The printed schema (`@latchkey/client/schema.graphql`) that apps in other repositories generate against: what
// codegen's plugin makes of schema/*.graphql, checked here on the committed file and on a schema made to use every
// directive the printer must keep or drop.
const { printClientSchema } = createRequire(import.meta.url)('../codegen/schema-sdl-plugin.cjs') as {
  printClientSchema: (schema: GraphQLSchema) => Promise<string>;
};

const SCHEMA_DIR = fileURLToPath(new URL('../../../schema/', import.meta.url));
const sources = readdirSync(SCHEMA_DIR)
  .filter((name) => name.endsWith('.graphql'))
  .sort()
  .map((name) => readFileSync(SCHEMA_DIR + name, 'utf8'));
const PRINTED = readFileSync(fileURLToPath(new URL('../schema.graphql', import.meta.url)), 'utf8');

/** Every `Type.field` (and input field) of a schema, its own types only. */
function coordinates(schema: GraphQLSchema): string[] {
  return Object.values(schema.getTypeMap())
    .filter((type) => !type.name.startsWith('__'))
    .flatMap((type) =>
      isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)
        ? Object.keys(type.getFields()).map((field) => `${type.name}.${field}`)
        : [type.name],
    )
    .sort();
}

describe('the printed schema (packages/client/schema.graphql)', () => {
  it('is what printing schema/*.graphql gives now (run `pnpm codegen` when this fails), in any order of the files', async () => {
    expect(PRINTED).toBe(await printClientSchema(buildSchema(sources.join('\n'))));
    expect(await printClientSchema(buildSchema([...sources].reverse().join('\n')))).toBe(PRINTED);
  });

  it('has every type and field of the schema, and none of the server-only directives (definitions or uses)', () => {
    const printed = buildSchema(PRINTED);
    expect(coordinates(printed)).toEqual(coordinates(buildSchema(sources.join('\n'))));
    // The specified directives, and incremental delivery's, which documents carry.
    expect(
      printed
        .getDirectives()
        .map((directive) => directive.name)
        .sort(),
    ).toEqual(['defer', 'deprecated', 'include', 'oneOf', 'skip', 'specifiedBy', 'stream']);
    expect(PRINTED).not.toMatch(/@(public|auth|can|stepUp)\b/);
    // What a client needs of the schema's own directives stays: the DateTime scalar with its description, @oneOf.
    expect(printed.getType('DateTime')?.description).toMatch(/RFC 3339/);
    expect(PRINTED).toMatch(/^input DocumentLookup @oneOf \{$/m);
  });

  it('keeps descriptions, every @deprecated with its reason, @oneOf and @specifiedBy, and directives a document may carry', async () => {
    const schema = buildSchema(`
      directive @serverRule(name: String!) on FIELD_DEFINITION | OBJECT
      directive @trace(label: String) on FIELD | QUERY
      "A URL."
      scalar Url @specifiedBy(url: "https://url.spec.whatwg.org/")
      enum Colour { RED GREEN @deprecated(reason: "Use RED.") }
      input Filter { colour: Colour, hue: Int @deprecated(reason: "Use colour.") }
      input Key @oneOf { id: ID, name: String }
      type Query @serverRule(name: "q") {
        "Things."
        things(filter: Filter, limit: Int @deprecated(reason: "Pages are fixed."), key: Key): [Url!]! @serverRule(name: "things")
        old: Int @deprecated(reason: "Gone soon.")
        older: Int @deprecated
      }
    `);
    const printed = await printClientSchema(schema);
    expect(printed).toContain('"""A URL."""\nscalar Url @specifiedBy(url: "https://url.spec.whatwg.org/")');
    expect(printed).toContain('GREEN @deprecated(reason: "Use RED.")');
    expect(printed).toContain('hue: Int @deprecated(reason: "Use colour.")');
    expect(printed).toContain('input Key @oneOf {');
    expect(printed).toContain('limit: Int @deprecated(reason: "Pages are fixed.")');
    expect(printed).toContain('old: Int @deprecated(reason: "Gone soon.")');
    expect(printed).toContain('older: Int @deprecated\n');
    expect(printed).toContain('"""Things."""');
    expect(printed).toContain('directive @trace(label: String) on FIELD | QUERY');
    expect(printed).not.toContain('serverRule');
    // Sorted: types, fields and enum values by name.
    expect(printed.indexOf('enum Colour')).toBeLessThan(printed.indexOf('input Filter'));
    expect(printed.indexOf('  old:')).toBeLessThan(printed.indexOf('  things('));
  });
});
