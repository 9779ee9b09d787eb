import { buildSchema, parse, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { costsOnFullPages, costsOver } from '../../test/support/operation-costs.js';
import { actualCost } from './actual-cost.js';

const schema = buildSchema(/* GraphQL */ `
  type Query {
    items(first: Int, last: Int): [Item!]!
    item: Item
    page(first: Int = 20, after: String): ItemConnection!
    search: [SearchResult!]!
    node: Node
    rateLimit: RateLimit
  }
  type RateLimit { currentlyAvailable: Int! maximumAvailable: Int! }
  interface Node { id: ID! }
  type Item implements Node { id: ID! name: String children(first: Int): [Item!]! tags: [String!]! owner: User }
  type User implements Node { id: ID! email: String }
  union SearchResult = Item | User
  type ItemConnection { edges: [ItemEdge!]! nodes: [Item!]! total: Int! }
  type ItemEdge { cursor: String! node: Item! }
`);

const item = (id: string, more: Record<string, unknown> = {}) => ({
  __typename: 'Item',
  id,
  name: `item ${id}`,
  tags: ['a'],
  children: [],
  owner: null,
  ...more,
});
const user = (id: string) => ({ __typename: 'User', id, email: `${id}@example.test` });
const items = (count: number) => Array.from({ length: count }, (_, index) => item(String(index)));

describe('actualCost', () => {
  it('equals the estimate on full pages: a page of 3 with first: 3, nested connections, fragments, aliases, variables', () => {
    const documents: [string, Record<string, unknown>?][] = [
      ['{ items(first: 3) { id name } }'],
      ['{ items(first: 3) { id children(first: 2) { id tags } } }'],
      ['{ page(first: 3) { edges { cursor node { id children(first: 2) { id } } } nodes { id } total } }'],
      ['{ page { nodes { name } } }'],
      ['query ($n: Int, $m: Int = 4) { page(first: $n) { edges { node { children(first: $m) { id } } } } }', { n: 5 }],
      ['{ a: items(first: 3) { ...F } b: items { x: id } } fragment F on Item { id owner { id email } }'],
      ['{ items(first: 2) { ... on Item { id } ... on Node { __typename } } node { id ... on Item { name } } }'],
      ['{ items { tags } item { id owner { ...U } } } fragment U on User { email }'],
    ];
    for (const [source, variables] of documents) {
      const { estimated, actual } = costsOnFullPages(schema, source, { variables });
      expect({ source, actual }).toEqual({ source, actual: estimated });
    }
  });

  it('a page returning fewer items than first costs less than the estimate: each item returned counts, no more', () => {
    const costs = costsOver(schema, '{ items(first: 3) { id name } }', { items: items(2) });
    expect(costs.estimated).toBe(1 + 3 * 2);
    expect(costs.actual).toBe(1 + 2 * 2);
    const empty = costsOver(schema, '{ page(first: 50) { edges { node { id } } total } }', { page: { edges: [], total: 0 } });
    expect(empty.actual).toBe(3); // page, edges, total
  });

  it('a list without first returning more than defaultListSize costs more than the estimate', () => {
    const costs = costsOver(schema, '{ items { id } }', { items: items(25) });
    expect(costs.estimated).toBe(1 + 10);
    expect(costs.actual).toBe(1 + 25);
  });

  it('a null object or list counts itself (it resolved, to null) and nothing below it; a null list item counts nothing', () => {
    expect(costsOver(schema, '{ item { id owner { id email } } }', { item: null }).actual).toBe(1);
    expect(costsOver(schema, '{ item { id owner { id email } } }', { item: item('1') }).actual).toBe(3);
    expect(costsOver(schema, '{ item { id owner { id email } } }', { item: item('1', { owner: user('u') }) }).actual).toBe(5);
    const schemaWithNullItems = buildSchema('type Query { list: [T] } type T { id: ID }');
    expect(costsOver(schemaWithNullItems, '{ list { id } }', { list: [{ id: '1' }, null, { id: null }] }).actual).toBe(3);
    expect(costsOver(schemaWithNullItems, '{ list { id } }', { list: null }).actual).toBe(1);
  });

  it('aliases are read as the response keys: each aliased field counts on its own, with its own list', () => {
    const costs = costsOver(schema, '{ first: items(first: 2) { id } second: items(first: 5) { key: id label: name } }', {
      items: (args: { first: number }) => items(args.first - 1),
    });
    expect(costs.actual).toBe(1 + 1 + 1 + 4 * 2);
  });

  it('fragments count their fields once per object; a key selected in two fragments counts once and their selections below merge', () => {
    const source = `{ items(first: 3) { ...A ...B ... on Item { id } } }
      fragment A on Item { id owner { id } } fragment B on Item { name owner { email } }`;
    const costs = costsOver(schema, source, { items: [item('1', { owner: user('u') }), item('2')] });
    // items 1; per item: id, owner, name = 3, x2 = 6; below the one owner: id, email = 2
    expect(costs.actual).toBe(9);
    expect(costs.estimated).toBeGreaterThan(costs.actual);
  });

  it("a fragment on an abstract type's member applies by the object's __typename, or by the keys it holds without one", () => {
    const root = { search: [item('1'), user('u'), user('v')], node: user('w') };
    const typed =
      '{ search { __typename ... on Item { id name } ... on User { id email } } node { __typename ...N } } fragment N on Item { id }';
    // search 1, the Item's id and name 2, each User's id and email 4; node 1 (a User: N does not apply)
    expect(costsOver(schema, typed, root).actual).toBe(8);
    const untyped =
      '{ search { ... on Item { id name } ... on User { id email } } node { ...N ... on User { email } } } fragment N on Item { id }';
    // the same 7 for search; node 1 and its email 1 (N's id is not in the response)
    expect(costsOver(schema, untyped, root).actual).toBe(9);
  });

  it('@skip and @include are evaluated with the variables, literal or variable, both ways', () => {
    const source = `query ($yes: Boolean!, $no: Boolean = false) {
      item { a: id @include(if: $yes) b: id @include(if: $no) c: id @skip(if: $yes) d: id @skip(if: $no) e: id @skip(if: false) }
    }`;
    // item, a, d, e
    expect(costsOver(schema, source, { item: item('1') }, { variables: { yes: true } }).actual).toBe(4);
    // item, b, c, e
    expect(costsOver(schema, source, { item: item('1') }, { variables: { yes: false, no: true } }).actual).toBe(4);
    expect(
      costsOver(schema, '{ item { ... @skip(if: true) { id name } owner @include(if: false) { id } } }', { item: item('1') }).actual,
    ).toBe(1);
  });

  it('a skipped selection merges nothing below a key it shares with one that ran, even when the data holds that key', () => {
    const source = 'query ($no: Boolean!) { item { owner { id } ... @include(if: $no) { owner { email } } } }';
    const document = parse(source);
    const operation = document.definitions[0] as OperationDefinitionNode;
    const data = { item: { owner: { id: 'u', email: 'u@example.test' } } };
    expect(actualCost(schema, document, operation, { no: false }, data)).toBe(3);
    expect(actualCost(schema, document, operation, { no: true }, data)).toBe(4);
  });

  it('a parsed document costed again (its places remembered) counts as the first time, whatever its conditions gave between', () => {
    const document = parse('query ($no: Boolean!) { node { ... on Item { id owner @include(if: $no) { id } } ... on User { email } } }');
    const operation = document.definitions[0] as OperationDefinitionNode;
    const typed = { node: { __typename: 'Item', id: '1', owner: { id: 'u' } } };
    const untyped = { node: { id: '1', owner: { id: 'u' }, email: 'u@example.test' } };
    const figures = () => [
      actualCost(schema, document, operation, { no: true }, typed),
      actualCost(schema, document, operation, { no: false }, typed),
      actualCost(schema, document, operation, { no: true }, untyped),
      actualCost(schema, document, operation, { no: false }, untyped),
    ];
    expect(figures()).toEqual([4, 2, 5, 3]);
    expect(figures()).toEqual([4, 2, 5, 3]);
  });

  it("a fragment whose type condition the object's __typename does not meet counts nothing, even when the data holds its keys", () => {
    const document = parse('{ node { __typename ... on Item { name } ... on User { email } } }');
    const operation = document.definitions[0] as OperationDefinitionNode;
    const node = { email: 'u@example.test', name: 'u' };
    expect(actualCost(schema, document, operation, undefined, { node: { __typename: 'User', ...node } })).toBe(2);
    expect(actualCost(schema, document, operation, undefined, { node: { __typename: 'Item', ...node } })).toBe(2);
    // Without __typename, every fragment applies and the keys the object holds count.
    expect(actualCost(schema, document, operation, undefined, { node })).toBe(3);
    const shared = parse('{ node { __typename ... on User { id } } }');
    const item = { node: { __typename: 'Item', id: '1' } };
    expect(actualCost(schema, shared, shared.definitions[0] as OperationDefinitionNode, undefined, item)).toBe(1);
  });

  it('introspection and __typename count nothing, nor anything below them', () => {
    const source = '{ __typename t: __typename __schema { types { name fields { name } } } item { __typename id } }';
    const costs = costsOver(schema, source, { item: item('1') });
    expect(costs.actual).toBe(2);
    expect(costs.estimated).toBe(2);
  });

  it("the caller's budget (Query.rateLimit) counts nothing, nor anything below it, estimated or actual", () => {
    const rateLimit = { currentlyAvailable: 1, maximumAvailable: 2 };
    const costs = costsOver(schema, '{ rateLimit { currentlyAvailable maximumAvailable } item { id } }', { rateLimit, item: item('1') });
    expect(costs.actual).toBe(2);
    expect(costs.estimated).toBe(2);
  });

  it('no data, or data that is no object, costs 0', () => {
    const document = parse('{ item { id } }');
    const operation = document.definitions[0] as OperationDefinitionNode;
    expect(actualCost(schema, document, operation, undefined, null)).toBe(0);
    expect(actualCost(schema, document, operation, undefined, undefined)).toBe(0);
    expect(actualCost(schema, document, operation, undefined, {})).toBe(0);
  });
});
