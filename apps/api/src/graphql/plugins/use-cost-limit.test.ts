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
