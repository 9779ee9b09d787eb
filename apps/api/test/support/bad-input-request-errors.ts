import { expect } from 'vitest';
import { CREATE, LIST } from './bad-input-field-errors.js';
import { at, demo, GQL, gql, JSON_TYPE } from './documents-suite.js';
import { COST_REPORTED } from './cost.js';

/**
 * Bad input that never reaches execution: wrong enum values, Int overflow and wrongly typed variables fail
 * validation (a literal) or variable coercion (a variable), so the answer has no `data` at all.
 */

/** A request error (validation or variable coercion): no `data`, 400 under graphql-response+json, 200 under application/json. */
export interface RequestCase {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  code: 'GRAPHQL_VALIDATION_FAILED' | 'BAD_USER_INPUT';
  message: string | RegExp;
  locatedAt: string;
}

export function requestCases(): RequestCase[] {
  const bob = demo.userId.bob;
  return [
    {
      name: 'first: 2147483648 literal (Int overflow)',
      query: '{ documents(first: 2147483648) { edges { cursor } } }',
      code: 'GRAPHQL_VALIDATION_FAILED',
      message: 'Int cannot represent non 32-bit signed integer value: 2147483648',
      locatedAt: '2147483648',
    },
    {
      name: '$first = 2147483648 (Int overflow)',
      query: LIST,
      variables: { first: 2_147_483_648 },
      code: 'BAD_USER_INPUT',
      message: 'Variable "$first" got invalid value 2147483648; Int cannot represent non 32-bit signed integer value: 2147483648',
      locatedAt: '$first',
    },
    {
      name: '$first = "10" (a string for an Int)',
      query: LIST,
      variables: { first: '10' },
      code: 'BAD_USER_INPUT',
      message: /^Variable "\$first" got invalid value "10"; Int cannot represent non-integer value: "10"$/,
      locatedAt: '$first',
    },
    {
      name: '$first = 1.5',
      query: LIST,
      variables: { first: 1.5 },
      code: 'BAD_USER_INPUT',
      message: /^Variable "\$first" got invalid value 1\.5; Int cannot represent non-integer value: 1\.5$/,
      locatedAt: '$first',
    },
    {
      name: 'status: [DELETED] literal',
      query: '{ documents(filter: {status: [DELETED]}) { edges { cursor } } }',
      code: 'GRAPHQL_VALIDATION_FAILED',
      message: 'Value "DELETED" does not exist in "DocumentStatus" enum.',
      locatedAt: 'DELETED',
    },
    {
      name: '$filter.status = ["DELETED"]',
      query: LIST,
      variables: { filter: { status: ['DELETED'] } },
      code: 'BAD_USER_INPUT',
      message:
        'Variable "$filter" got invalid value "DELETED" at "filter.status[0]"; Value "DELETED" does not exist in "DocumentStatus" enum.',
      locatedAt: '$filter',
    },
    {
      name: '$filter with an unknown field',
      query: LIST,
      variables: { filter: { owner: 'alice' } },
      code: 'BAD_USER_INPUT',
      message: /^Variable "\$filter" got invalid value .*Field "owner" is not defined by type "DocumentFilter"\.$/,
      locatedAt: '$filter',
    },
    {
      name: 'changeMemberRole role: GOD literal',
      query: `mutation { changeMemberRole(input: {organization: "acme", userId: "${bob}", role: GOD}) { membership { role } } }`,
      code: 'GRAPHQL_VALIDATION_FAILED',
      message: 'Value "GOD" does not exist in "Role" enum.',
      locatedAt: 'GOD',
    },
    {
      name: 'changeMemberRole $role = "GOD"',
      query: `mutation ($role: Role!) { changeMemberRole(input: {organization: "acme", userId: "${bob}", role: $role}) { membership { role } } }`,
      variables: { role: 'GOD' },
      code: 'BAD_USER_INPUT',
      message: 'Variable "$role" got invalid value "GOD"; Value "GOD" does not exist in "Role" enum.',
      locatedAt: '$role',
    },
    {
      name: 'createDocument $input without a title',
      query: CREATE,
      variables: { input: { organization: 'acme' } },
      code: 'BAD_USER_INPUT',
      message: /^Variable "\$input" got invalid value .*Field "title" of required type "String!" was not provided\.$/,
      locatedAt: '$input',
    },
    {
      name: 'createDocument $input.title = 5',
      query: CREATE,
      variables: { input: { organization: 'acme', title: 5 } },
      code: 'BAD_USER_INPUT',
      message: /^Variable "\$input" got invalid value 5 at "input\.title"; String cannot represent a non string value: 5$/,
      locatedAt: '$input',
    },
  ];
}

export async function expectRequestError(c: Pick<RequestCase, 'name' | 'query' | 'variables' | 'code' | 'message' | 'locatedAt'>) {
  for (const [accept, status] of [
    [GQL, 400],
    [JSON_TYPE, 200],
  ] as const) {
    const res = await gql('alice', c.query, c.variables, accept);
    expect.soft(res.status, `${c.name} (${accept})`).toBe(status);
    expect.soft(res.headers.get('content-type'), c.name).toBe(`${accept}; charset=utf-8`);
    // never reached execution: no `data` key at all, and no `path`
    expect.soft(res.json, `${c.name} (${accept})`).toEqual({
      errors: [
        {
          message: expect.stringMatching(
            typeof c.message === 'string' ? `^${c.message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$` : c.message,
          ),
          locations: [at(c.query, c.locatedAt)],
          extensions: { code: c.code },
        },
      ],
      extensions: COST_REPORTED,
    });
    expect.soft('data' in (res.json ?? {}), `${c.name}: data must be absent`).toBe(false);
  }
}
