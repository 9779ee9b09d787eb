import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { overWebSocket, wsClient } from './support/subscriptions.js';
import { getGraphQL, postGraphQL, startTestService, type TestService } from './support/service.js';
import { COST_REPORTED } from './support/cost.js';

// "Did you mean ...?" lets a tool (clairvoyance and the like) rebuild a schema whose
// introspection is refused. Where introspection is refused (a guest under INTROSPECTION=signed-in, everyone
// under off), validation and variable-coercion messages carry no suggestion; where it is allowed they still do.

const FIELD_TYPO = '{ statuss { service } }';
const ENUM_TYPO = '{ documents(filter: { status: [PUBLISHD] }) { edges { cursor } } }';
const INPUT_FIELD_TYPO = '{ documents(filter: { statuz: [PUBLISHED] }) { edges { cursor } } }';
const VARIABLES = 'query ($filter: DocumentFilter) { documents(filter: $filter) { edges { cursor } } }';
const ENUM_VARIABLE = { filter: { status: ['PUBLISHD'] } };
const INPUT_FIELD_VARIABLE = { filter: { statuz: ['PUBLISHED'] } };

type Answer = Awaited<ReturnType<typeof postGraphQL>>;
const messages = (answer: Answer) => (answer.json.errors as { message: string }[]).map((error) => error.message);

/** Every error message of an answer; none may suggest, or (when `suggested`) at least one does. */
function expectSuggestions(answer: Answer, suggested: boolean) {
  expect(answer.json.errors?.length, answer.text).toBeGreaterThan(0);
  expect(answer.json).not.toHaveProperty('data');
  if (suggested) expect(messages(answer).some((message) => message.includes('Did you mean'))).toBe(true);
  else for (const message of messages(answer)) expect(message).not.toMatch(/did you mean|enum value "PUBLISHED"|"status"\?/i);
}

/** The error messages a graphql-ws subscribe gets back (the protocol's `error` message, or a result's errors). */
async function overWs(url: string, token: string | undefined, payload: { query: string; variables?: Record<string, unknown> }) {
  const client = wsClient(url, token);
  try {
    const received = overWebSocket(client, payload);
    await received.ended();
    const errors = (Array.isArray(received.error) ? received.error : received.results.flatMap((result) => result.errors ?? [])) as {
      message: string;
    }[];
    expect(errors.length).toBeGreaterThan(0);
    return errors.map((error) => error.message);
  } finally {
    await client.dispose();
  }
}

describe('no suggestions where introspection is refused', () => {
  describe('INTROSPECTION=signed-in', () => {
    let service: TestService;
    beforeAll(async () => {
      service = await startTestService({ INTROSPECTION: 'signed-in' });
    });
    afterAll(() => service?.stop());

    it('a guest gets validation errors without suggestions (field, enum value, input field; POST and GET)', async () => {
      for (const query of [FIELD_TYPO, ENUM_TYPO, INPUT_FIELD_TYPO]) {
        const answer = await postGraphQL(service.graphqlUrl, { query });
        expect(answer.status).toBe(400);
        expectSuggestions(answer, false);
        expect(answer.json.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
        expectSuggestions(await getGraphQL(service.graphqlUrl, { query }), false);
      }
      expect(messages(await postGraphQL(service.graphqlUrl, { query: FIELD_TYPO }))).toEqual([
        'Cannot query field "statuss" on type "Query".',
      ]);
    });

    it('a guest presenting an invalid token, or a malformed one, is a guest here too', async () => {
      const expired = await service.token('someone', { ttlSeconds: -3600 });
      for (const token of [expired, 'not-a-token'])
        expectSuggestions(await postGraphQL(service.graphqlUrl, { query: FIELD_TYPO }, { token }), false);
    });

    it('a guest over WebSocket gets validation errors without suggestions', async () => {
      for (const query of [FIELD_TYPO, ENUM_TYPO]) {
        for (const message of await overWs(service.graphqlUrl, undefined, { query })) expect(message).not.toMatch(/did you mean/i);
      }
    });

    it('a signed-in caller, who may introspect, still gets suggestions (validation and variable coercion, HTTP and WebSocket)', async () => {
      const token = await service.token('member-1');
      expectSuggestions(await postGraphQL(service.graphqlUrl, { query: FIELD_TYPO }, { token }), true);
      expectSuggestions(await postGraphQL(service.graphqlUrl, { query: ENUM_TYPO }, { token }), true);
      expectSuggestions(await postGraphQL(service.graphqlUrl, { query: VARIABLES, variables: ENUM_VARIABLE }, { token }), true);
      expect(
        (await overWs(service.graphqlUrl, token, { query: FIELD_TYPO })).some((message) => message.includes('Did you mean "status"?')),
      ).toBe(true);
    });
  });

  describe('INTROSPECTION=off', () => {
    let service: TestService;
    beforeAll(async () => {
      service = await startTestService({ INTROSPECTION: 'off' });
    });
    afterAll(() => service?.stop());

    it('nobody gets suggestions: validation errors for guests and signed-in callers, in batches too', async () => {
      const token = await service.token('member-1');
      for (const query of [FIELD_TYPO, ENUM_TYPO, INPUT_FIELD_TYPO]) {
        expectSuggestions(await postGraphQL(service.graphqlUrl, { query }), false);
        expectSuggestions(await postGraphQL(service.graphqlUrl, { query }, { token }), false);
      }
      const batch = await postGraphQL(service.graphqlUrl, [{ query: '{ __typename }' }, { query: FIELD_TYPO }], { token });
      expect(batch.json[0]).toEqual({ data: { __typename: 'Query' }, extensions: COST_REPORTED });
      expect(batch.json[1].errors.map((error: { message: string }) => error.message)).toEqual([
        'Cannot query field "statuss" on type "Query".',
      ]);
    });

    it('nobody gets suggestions: variable-coercion errors (enum value, input field), over HTTP and WebSocket', async () => {
      const token = await service.token('member-1');
      for (const variables of [ENUM_VARIABLE, INPUT_FIELD_VARIABLE]) {
        const answer = await postGraphQL(service.graphqlUrl, { query: VARIABLES, variables }, { token });
        expect(answer.status).toBe(400);
        expect(answer.json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
        expectSuggestions(answer, false);
        for (const message of await overWs(service.graphqlUrl, token, { query: VARIABLES, variables }))
          expect(message).not.toMatch(/did you mean/i);
      }
      const answer = await postGraphQL(service.graphqlUrl, { query: VARIABLES, variables: ENUM_VARIABLE }, { token });
      expect(messages(answer)).toEqual([
        'Variable "$filter" got invalid value "PUBLISHD" at "filter.status[0]"; Value "PUBLISHD" does not exist in "DocumentStatus" enum.',
      ]);
    });
  });
});
