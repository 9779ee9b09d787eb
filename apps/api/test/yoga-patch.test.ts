import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import type { ValidationRule } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';

// patches/graphql-yoga@5.24.1.patch makes two per-request steps of Yoga's own plugins remember their outcome:
// - the result processor's media-type negotiation (the Accept header split, parsed and compared with every
//   processor's media types on every request) is worked out once per Accept header and replayed;
// - the validation cache's key for the list of rules (every rule's `name` read and joined on every request) is
//   found once per distinct list of rule functions.
// These tests drive a Yoga built by `createYoga` (the patched copy this project resolves) and hold both to what
// unpatched Yoga answers: the same processor and media type for every Accept header, whatever came before; a
// document validated again whenever the rule list differs, and only then.

const typeDefs = /* GraphQL */ `
  type Query {
    hello: String
    slow: [String]
  }
  type Subscription {
    ticks: Int
  }
`;

function yogaWith(plugins: Plugin[] = []) {
  return createYoga({
    schema: createSchema({
      typeDefs,
      resolvers: {
        Query: { hello: () => 'world', slow: () => ['a', 'b'] },
        Subscription: {
          ticks: {
            subscribe: async function* () {
              yield { ticks: 1 };
            },
          },
        },
      },
    }),
    logging: false,
    plugins: [useDeferStream(), ...plugins],
  });
}

async function ask(yoga: ReturnType<typeof yogaWith>, query: string, accept: string | null, headers: Record<string, string> = {}) {
  const response = await yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(accept === null ? {} : { accept }), ...headers },
    body: JSON.stringify({ query }),
  });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    accept: response.headers.get('accept'),
    text: await response.text(),
  };
}

/** A content type without its parameters. */
const mediaTypeOf = (type: string | null) => type?.split(';')[0] ?? null;

describe('media-type negotiation remembered per Accept header (patched Yoga answers as unpatched Yoga)', () => {
  // What unpatched Yoga 5.24.1 answers for each header (the last matching processor wins; `*/*` and no header
  // mean every type, so `application/json`; other charsets are not acceptable).
  const cases: [accept: string | null, query: string, status: number, type: string | null][] = [
    [null, '{ hello }', 200, 'application/json; charset=utf-8'],
    ['*/*', '{ hello }', 200, 'application/json; charset=utf-8'],
    ['application/graphql-response+json', '{ hello }', 200, 'application/graphql-response+json; charset=utf-8'],
    ['application/json', '{ hello }', 200, 'application/json; charset=utf-8'],
    ['application/json, application/graphql-response+json', '{ hello }', 200, 'application/json; charset=utf-8'],
    [
      'application/graphql-response+json;charset=utf-8, application/json',
      '{ hello }',
      200,
      'application/graphql-response+json; charset=utf-8',
    ],
    ['application/json; charset=iso-8859-1', '{ hello }', 406, null],
    ['text/html', '{ hello }', 406, null],
    ['multipart/mixed', '{ hello }', 200, 'multipart/mixed; boundary="-"'],
    ['text/event-stream', '{ hello }', 200, 'text/event-stream'],
    // A streamed result (@stream) is an async iterable: the regular processor is skipped for it.
    ['application/json', '{ slow @stream }', 406, null],
    ['multipart/mixed, application/json', '{ slow @stream }', 200, 'multipart/mixed; boundary="-"'],
    ['text/event-stream', 'subscription { ticks }', 200, 'text/event-stream'],
    ['application/json', 'subscription { ticks }', 406, null],
    // One header, three outcomes: a plain result, a streamed one, a subscription (which has no multipart processor).
    ['text/event-stream, application/json', '{ hello }', 200, 'application/json; charset=utf-8'],
    ['text/event-stream, application/json', '{ slow @stream }', 200, 'text/event-stream'],
    ['multipart/mixed', '{ slow @stream }', 200, 'multipart/mixed; boundary="-"'],
    ['multipart/mixed', 'subscription { ticks }', 406, null],
  ];

  it('every Accept header gets the same processor the first time and every time after, in any order', async () => {
    const yoga = yogaWith();
    const expected = cases.map(([, , status, type]) => ({ status, type: mediaTypeOf(type) }));
    const got = async () => {
      const answers = [];
      for (const [accept, query] of cases) {
        const { status, type } = await ask(yoga, query, accept);
        answers.push({ status, type: mediaTypeOf(type) });
      }
      return answers;
    };
    expect(await got()).toEqual(expected);
    expect(await got()).toEqual(expected);
    // The same header first for a plain result, then for an async iterable, then plain again: kept apart.
    expect((await ask(yoga, '{ slow @stream }', 'application/json')).status).toBe(406);
    expect((await ask(yoga, '{ hello }', 'application/json')).status).toBe(200);
  });

  it('a refusal lists the acceptable media types, the same on a remembered header', async () => {
    const yoga = yogaWith();
    const first = await ask(yoga, '{ hello }', 'text/html');
    const again = await ask(yoga, '{ hello }', 'text/html');
    expect(first.status).toBe(406);
    expect(first.accept).toBe(
      'text/event-stream; charset=utf-8, multipart/mixed; charset=utf-8, application/graphql-response+json; charset=utf-8, application/json',
    );
    expect(again.accept).toBe(first.accept);
  });

  it('a header longer than 256 characters is worked out every time, with the same answers', async () => {
    const yoga = yogaWith();
    const filler = 'x-unknown/type, '.repeat(20);
    expect(filler.length).toBeGreaterThan(256);
    for (let i = 0; i < 3; i++) {
      // The first acceptable type listed wins.
      expect((await ask(yoga, '{ hello }', `application/graphql-response+json, ${filler}application/json`)).type).toBe(
        'application/graphql-response+json; charset=utf-8',
      );
      expect((await ask(yoga, '{ hello }', `application/json, ${filler}application/graphql-response+json`)).type).toBe(
        'application/json; charset=utf-8',
      );
      expect((await ask(yoga, '{ slow @stream }', `application/json, ${filler}text/event-stream`)).type).toBe('text/event-stream');
    }
  });

  it('past 256 remembered headers the answers stay right (the memory starts over)', async () => {
    const yoga = yogaWith();
    for (let i = 0; i < 600; i++) {
      const json = i % 2 === 0;
      const { status, type } = await ask(yoga, '{ hello }', `x-${i}/y, ${json ? 'application/json' : 'application/graphql-response+json'}`);
      expect(status).toBe(200);
      expect(type).toBe(json ? 'application/json; charset=utf-8' : 'application/graphql-response+json; charset=utf-8');
    }
  });
});

describe('the validation cache keyed by the list of rule functions (patched Yoga answers as unpatched Yoga)', () => {
  /** A rule that only counts how often validation runs it. */
  function countingRule(name: string) {
    const counter = { runs: 0 };
    const rule: ValidationRule = () => {
      counter.runs++;
      return {};
    };
    Object.defineProperty(rule, 'name', { value: name });
    return { rule, counter };
  }

  it('a document validated once is not validated again under the same rules', async () => {
    const { rule, counter } = countingRule('Counting');
    const yoga = yogaWith([{ onValidate: ({ addValidationRule }) => addValidationRule(rule) }]);
    for (let i = 0; i < 5; i++) expect((await ask(yoga, '{ hello }', null)).status).toBe(200);
    expect(counter.runs).toBe(1);
    expect((await ask(yoga, '{ hello hello2: hello }', null)).status).toBe(200);
    expect(counter.runs).toBe(2);
  });

  it('a rule added for some requests only: the document is validated under each list of rules, each answer kept apart', async () => {
    const always = countingRule('Always');
    const sometimes = countingRule('OnlyWithHeader');
    const yoga = yogaWith([
      {
        onValidate: ({ addValidationRule, context }) => {
          addValidationRule(always.rule);
          if ((context as { request: Request }).request.headers.get('x-extra') === '1') addValidationRule(sometimes.rule);
        },
      },
    ]);
    for (let i = 0; i < 3; i++) {
      expect((await ask(yoga, '{ hello }', null)).status).toBe(200);
      expect((await ask(yoga, '{ hello }', null, { 'x-extra': '1' })).status).toBe(200);
    }
    // One validation per list of rules, however the requests interleave.
    expect(always.counter.runs).toBe(2);
    expect(sometimes.counter.runs).toBe(1);
  });

  it('rule functions made anew for every request are still told apart by name, as before, past the remembered lists', async () => {
    let made = 0;
    const yoga = yogaWith([
      {
        onValidate: ({ addValidationRule }) => {
          made++;
          const fresh: ValidationRule = () => ({});
          Object.defineProperty(fresh, 'name', { value: 'Fresh' });
          addValidationRule(fresh);
        },
      },
    ]);
    for (let i = 0; i < 1_100; i++) expect((await ask(yoga, '{ hello }', null)).status).toBe(200);
    expect(made).toBe(1_100);
  });
});
