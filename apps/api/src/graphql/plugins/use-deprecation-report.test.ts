import { operationUsage } from '@latchkey/schema-contract';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useDeprecationReport } from './use-deprecation-report.js';

// The plugin on a Yoga of its own (its parse cache on, as the server's is): what it reports, what it counts, and how
// often it works out what an operation uses. The server's transports are tested in test/deprecations.test.ts.
const schema = createSchema({
  typeDefs: /* GraphQL */ `
    type Query {
      now: String!
      time: String! @deprecated(reason: "Use now.")
      list(order: String @deprecated(reason: "Always newest first.")): [String!]!
    }
    type Subscription { ticks: Tick! }
    type Tick { at: String!, old: String! @deprecated(reason: "Use at.") }
  `,
  resolvers: {
    Query: { now: () => 'n', time: () => 't', list: () => ['a'] },
    Subscription: {
      ticks: {
        subscribe: async function* () {
          for (const at of ['1', '2']) yield { ticks: { at, old: at } };
        },
      },
    },
  },
});

function server() {
  const computed: (string | null)[] = [];
  const uses: { coordinates: string[]; client: string }[] = [];
  const yoga = createYoga({
    schema,
    logging: false,
    plugins: [
      useDeprecationReport({
        isKnownApp: (name) => name === 'ios',
        uses: {
          used: (deprecated, client) => void uses.push({ coordinates: deprecated.map((use) => use.coordinate), client }),
          idle: async () => undefined,
        },
        deprecationsOf: (onSchema, document, operationName) => {
          computed.push(operationName);
          return operationUsage(onSchema, document, operationName).deprecated;
        },
      }),
    ],
  });
  const post = async (body: object, headers: Record<string, string> = {}) =>
    (
      await yoga.fetch('http://test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
        body: JSON.stringify(body),
      })
    ).json() as Promise<{ data?: unknown; extensions?: Record<string, unknown> }>;
  return { yoga, post, computed, uses };
}

describe('extensions.deprecated', () => {
  it('names each deprecated coordinate an operation uses, with its reason; an operation using none has no `deprecated` key', async () => {
    const { post } = server();
    expect((await post({ query: '{ now time list(order: "x") }' })).extensions).toEqual({
      deprecated: [
        { coordinate: 'Query.time', reason: 'Use now.' },
        { coordinate: 'Query.list.order', reason: 'Always newest first.' },
      ],
    });
    const plain = await post({ query: '{ now list }' });
    expect(plain.data).toEqual({ now: 'n', list: ['a'] });
    expect(plain).not.toHaveProperty('extensions');
  });

  it('is worked out once per document and operation name, not per request', async () => {
    const { post, computed } = server();
    const query = 'query A { time } query B { now }';
    for (let round = 0; round < 3; round += 1) {
      expect((await post({ query, operationName: 'A' })).extensions).toHaveProperty('deprecated');
      expect((await post({ query, operationName: 'B' })).extensions).toBeUndefined();
      expect((await post({ query: '{ time }' })).extensions).toHaveProperty('deprecated');
    }
    expect(computed).toEqual(['A', 'B', null]);
  });

  it('a subscription reports in its first event only, and counts once', async () => {
    const { yoga, uses } = server();
    const response = await yoga.fetch('http://test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { ticks { at old } }' }),
    });
    const events = (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice('data: '.length)) as { extensions?: unknown });
    expect(events.map((event) => event.extensions)).toEqual([{ deprecated: [{ coordinate: 'Tick.old', reason: 'Use at.' }] }, undefined]);
    expect(uses).toEqual([{ coordinates: ['Tick.old'], client: 'unknown' }]);
  });
});

describe('whose use it is', () => {
  it("a known app's client-name header (Hive's or Apollo's) names the client; any other header, or none, is `unknown`", async () => {
    const { post, uses } = server();
    const query = { query: '{ time }' };
    await post(query, { 'graphql-client-name': 'ios' });
    await post(query, { 'graphql-client-name': 'web', 'apollographql-client-name': 'ios' });
    await post(query, { 'apollographql-client-name': 'android' });
    await post(query, { 'graphql-client-name': `ios${'x'.repeat(10_240)}` });
    await post(query);
    await post({ query: '{ now }' }, { 'graphql-client-name': 'ios' });
    expect(uses.map((use) => use.client)).toEqual(['ios', 'ios', 'unknown', 'unknown', 'unknown']);
    expect(uses[0]!.coordinates).toEqual(['Query.time']);
  });
});
