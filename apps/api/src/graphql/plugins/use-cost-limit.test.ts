import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useCostLimit } from './use-cost-limit.js';

// The cost model counts list sizes from first/last, including variables, per request: a cached
// validation result must not let a second request with a larger page size through.
const schema = createSchema({
  typeDefs: /* GraphQL */ `
    type Query { items(first: Int, last: Int): [Item!]! node: Item page(first: Int = 20, after: String): ItemConnection! }
    type Item { id: ID! children(first: Int): [Item!]! tags: [String!]! }
    type ItemConnection { edges: [ItemEdge!]! nodes: [Item!]! total: Int! }
    type ItemEdge { cursor: String! node: Item! }
  `,
  resolvers: {
    Query: { items: () => [], node: () => null, page: () => ({ edges: [], nodes: [], total: 0 }) },
  },
});

function server(maxCost: number) {
  return createYoga({ schema, plugins: [useCostLimit({ maxCost, defaultListSize: 10 })], logging: false });
}

async function run(yoga: ReturnType<typeof server>, query: string, variables?: Record<string, unknown>) {
  const res = await yoga.fetch('http://test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query, variables }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { data?: unknown; errors?: { message: string; extensions: { code: string } }[] },
  };
}

describe('cost limit (spec Limits 3)', () => {
  it('counts each field once per item of every enclosing list, sized by first/last literals', async () => {
    const yoga = server(1000);
    // items(first: 5) = 1, id x5 = 5, children(first: 4) x5 = 5, id x20 = 20 -> 31
    const ok = await run(yoga, '{ items(first: 5) { id children(first: 4) { id } } }');
    expect(ok.body.errors).toBeUndefined();
    const tight = server(30);
    const refused = await run(tight, '{ items(first: 5) { id children(first: 4) { id } } }');
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]?.message).toBe('Query cost 31 exceeds the limit of 30.');
    expect(refused.body.errors?.[0]?.extensions.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('uses the variable values of each request, even when the document is cached', async () => {
    const yoga = server(50);
    const query = 'query ($n: Int) { items(first: $n) { id } }';
    expect((await run(yoga, query, { n: 10 })).body.errors).toBeUndefined(); // 1 + 10
    const big = await run(yoga, query, { n: 100 }); // 1 + 100
    expect(big.status).toBe(400);
    expect(big.body.errors?.[0]?.message).toBe('Query cost 101 exceeds the limit of 50.');
    expect((await run(yoga, query, { n: 10 })).body.errors).toBeUndefined();
  });

  it('assumes the default list size when no first/last is given, and counts last like first', async () => {
    const yoga = server(10);
    expect((await run(yoga, '{ items { id } }')).body.errors?.[0]?.message).toBe('Query cost 11 exceeds the limit of 10.');
    expect((await run(yoga, '{ items(last: 9) { id } }')).body.errors).toBeUndefined();
  });

  it('expands fragments and counts introspection-free __typename as free', async () => {
    const yoga = server(12);
    const query = 'query { items(first: 3) { ...F } } fragment F on Item { id __typename children(first: 2) { id } }';
    // 1 + 3 (id) + 3 (children) + 6 (ids) = 13
    expect((await run(yoga, query)).body.errors?.[0]?.message).toBe('Query cost 13 exceeds the limit of 12.');
  });

  it("a paged connection sizes its edges and nodes by first/last (variables included), else by the argument's schema default", async () => {
    const yoga = server(1000);
    const cost = async (query: string, variables?: Record<string, unknown>, limit = 0) => {
      const refused = await run(server(limit), query, variables);
      return Number(/Query cost (\d+)/.exec(refused.body.errors?.[0]?.message ?? '')?.[1]);
    };
    // page 1, edges 1, (cursor + node + id) x 50 = 150, total 1 -> 153
    expect(await cost('{ page(first: 50) { edges { cursor node { id } } total } }')).toBe(153);
    expect(await cost('query ($n: Int) { page(first: $n) { nodes { id } } }', { n: 30 })).toBe(32);
    // No first: the schema's default (20), not the default list size (10).
    expect(await cost('{ page { nodes { id } } }')).toBe(22);
    // Fragments on the connection keep its page size.
    expect(await cost('{ page(first: 4) { ...P } } fragment P on ItemConnection { edges { node { id } } }')).toBe(10);
    expect((await run(yoga, '{ page(first: 5) { edges { node { id } } } }')).body.errors).toBeUndefined();
  });

  it("a variable the request leaves out is sized by the operation's default for it, as execution coerces it; an explicit null by the list's default", async () => {
    const cost = async (query: string, variables?: Record<string, unknown>) =>
      Number(/Query cost (\d+)/.exec((await run(server(0), query, variables)).body.errors?.[0]?.message ?? '')?.[1]);
    const query = 'query ($n: Int = 100) { items(first: $n) { id } }';
    expect(await cost(query)).toBe(101); // the operation's default, not the default list size (10)
    expect(await cost(query, {})).toBe(101);
    expect(await cost(query, { n: 3 })).toBe(4);
    expect(await cost(query, { n: null })).toBe(11); // null: no first, as the resolver sees it
    expect(await cost('query ($n: Int = 50) { page(first: $n) { nodes { id } } }')).toBe(52);
    // Refused for its default: the same operation with a small value goes through.
    const yoga = server(60);
    expect((await run(yoga, query)).status).toBe(400);
    expect((await run(yoga, query, { n: 5 })).body.errors).toBeUndefined();
  });

  it('a remembered estimate is only reused for the same page sizes: each request is judged by its own variables', async () => {
    const yoga = server(50);
    const query = 'query ($a: Int, $b: Int = 2) { items(first: $a) { id children(first: $b) { id } } }';
    // 1 + a + a + a*b
    const message = async (variables?: Record<string, unknown>) => (await run(yoga, query, variables)).body.errors?.[0]?.message;
    for (let round = 0; round < 2; round++) {
      expect(await message({ a: 4 })).toBeUndefined(); // 1 + 4 + 4 + 8 = 17
      expect(await message({ a: 4, b: 20 })).toBe('Query cost 89 exceeds the limit of 50.');
      expect(await message({ a: 100 })).toBe('Query cost 401 exceeds the limit of 50.');
      expect(await message({ a: 100000 })).toBe('Query cost 401 exceeds the limit of 50.'); // costed as maxPageSize
      expect(await message({ a: 2, b: 10 })).toBeUndefined(); // 1 + 2 + 2 + 20 = 25
      expect(await message({ a: 2, b: 30 })).toBe('Query cost 65 exceeds the limit of 50.');
    }
    // Many distinct sizes: past the remembered ones, each is still estimated on its own.
    for (let a = 0; a <= 100; a++) {
      const expected = 1 + a + a + 2 * a;
      expect(await message({ a })).toBe(expected > 50 ? `Query cost ${expected} exceeds the limit of 50.` : undefined);
    }
  });

  it("a page larger than maxPageSize is costed as maxPageSize (the resolver's BAD_USER_INPUT is the clearer refusal); a variable that is no Int is left to coercion", async () => {
    const cost = async (query: string, variables?: Record<string, unknown>) =>
      Number(/Query cost (\d+)/.exec((await run(server(0), query, variables)).body.errors?.[0]?.message ?? '')?.[1]);
    expect(await cost('{ items(first: 100000) { id } }')).toBe(101);
    expect(await cost('query ($n: Int) { items(first: $n) { id } }', { n: 2 ** 31 })).toBe(11); // as if no first: the default list size
    expect((await run(server(1000), 'query ($n: Int) { items(first: $n) { id } }', { n: 2 ** 31 })).body.errors?.[0]?.message).toContain(
      'Int cannot represent',
    );
  });
});
