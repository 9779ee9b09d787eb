import { describe, expect, it } from 'vitest';
import { compareSchemas, type ClassifiedChange } from './compare-schemas.js';
import { operationsOf } from './known-operation.js';
import { schemaOfSources } from './schema-source.js';

const BASE = `
  type Query {
    status: Status!
    documents(first: Int = 20, after: String, state: State): [Document!]!
    legacy: String
    unused: String
  }
  type Status { service: String!, time: String! @deprecated(reason: "Use serverTime."), serverTime: String! }
  type Document { id: ID!, title: String!, state: State! }
  enum State { DRAFT, PUBLISHED }
`;
const schemaOf = (sdl: string) => schemaOfSources([{ name: 'schema/test.graphql', body: sdl }]);
const base = schemaOf(BASE);
const edited = (from: string, to: string) => {
  if (!BASE.includes(from)) throw new Error(`no ${from}`);
  return schemaOf(BASE.replace(from, to));
};

const repository = operationsOf(
  { name: 'ops.graphql', body: 'query Docs { documents { id state } } query Status { status { service } }' },
  { source: 'repository', file: 'ops.graphql' },
);
const app = operationsOf({ name: 'sha256:ab', body: 'query Legacy { legacy }' }, { source: 'app', app: 'web', version: '1.0.0' });
const apq = operationsOf(
  { name: 'sha256:cd', body: '{ status { time } }' },
  { source: 'apq', lastUsedAt: new Date('2026-12-01T00:00:00Z') },
);
const known = [...repository, ...app, ...apq];

const summary = (changes: ClassifiedChange[]) =>
  changes.map(({ level, coordinate, affected }) => ({
    level,
    coordinate,
    affected: affected.map((use) => [use.source, use.app ?? use.client ?? null, use.operation].filter(Boolean).join(' ')),
  }));

describe('a schema change against the operations clients are known to send', () => {
  it('a removed field that an operation selects is breaking and names it; one nobody selects is safe by usage', async () => {
    const report = await compareSchemas(base, edited('legacy: String\n    unused: String', ''), known);
    expect(summary(report.changes)).toEqual([
      { level: 'breaking', coordinate: 'Query.legacy', affected: ['app web Legacy'] },
      { level: 'safe', coordinate: 'Query.unused', affected: [] },
    ]);
    expect(report.changes[1]).toMatchObject({ criticality: 'breaking', safeByUsage: true });
  });

  it('a removed deprecated field is broken for a client whose recorded use remains, and names the APQ registration that selects it', async () => {
    const uses = [{ coordinate: 'Status.time', client: 'web', lastUsedAt: new Date('2026-12-02T00:00:00Z') }];
    const report = await compareSchemas(base, edited('time: String! @deprecated(reason: "Use serverTime."), ', ''), known, uses);
    expect(summary(report.changes)).toEqual([{ level: 'breaking', coordinate: 'Status.time', affected: ['apq', 'client web'] }]);
  });

  it('a nullable argument made non-null is breaking for the operations that omit it', async () => {
    const report = await compareSchemas(base, edited('after: String,', 'after: String!,'), known);
    expect(summary(report.changes)).toEqual([{ level: 'breaking', coordinate: 'Query.documents.after', affected: ['repository Docs'] }]);
  });

  it("dangerous changes name the operations that select what they touch: an enum value added, an argument's default changed", async () => {
    const report = await compareSchemas(
      base,
      edited('enum State { DRAFT, PUBLISHED }', 'enum State { DRAFT, PUBLISHED, ARCHIVED }'),
      known,
    );
    expect(summary(report.changes)).toEqual([{ level: 'dangerous', coordinate: 'State.ARCHIVED', affected: ['repository Docs'] }]);
    const defaults = await compareSchemas(base, edited('first: Int = 20', 'first: Int = 50'), known);
    expect(summary(defaults.changes)).toEqual([{ level: 'dangerous', coordinate: 'Query.documents.first', affected: ['repository Docs'] }]);
  });

  it('an operation that no longer validates is broken even where no change names it; one already invalid is not blamed', async () => {
    const stale = operationsOf({ name: 'x', body: '{ gone }' }, { source: 'apq' });
    const report = await compareSchemas(null, base, [...known, ...stale]);
    expect(summary(report.changes)).toEqual([{ level: 'breaking', coordinate: null, affected: ['apq'] }]);
    expect(report.changes[0]!.message).toBe('Cannot query field "gone" on type "Query".');
    const compared = await compareSchemas(base, base, [...known, ...stale]);
    expect(compared.changes).toEqual([]);
    expect(compared.alreadyInvalid.map((use) => use.source)).toEqual(['apq']);
  });
});
