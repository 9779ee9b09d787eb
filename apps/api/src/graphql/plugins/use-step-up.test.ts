import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { CREDENTIAL_CHANGE_STEP_UP, LEGAL_HOLD_STEP_UP } from '@latchkey/auth/tokens';
import { buildSchema } from '../schema.js';
import { applyStepUpRules, stepUpMarks, useStepUp } from './use-step-up.js';

const NOW = 1_800_000_000;
const typeDefs = /* GraphQL */ `
  directive @public on FIELD_DEFINITION | OBJECT
  directive @stepUp(acr: String, maxAge: Int) on FIELD_DEFINITION
  type Query { open: String @public fresh: String @stepUp(maxAge: 300) strong: String @stepUp(acr: "urn:latchkey:acr:phr") plain: String }
`;

function server(caller: { acr: string | null; authTime: number | null } | null) {
  const schema = applyStepUpRules(
    createSchema({ typeDefs, resolvers: { Query: { open: () => 'o', fresh: () => 'f', strong: () => 's', plain: () => 'p' } } }),
    { now: () => NOW },
  );
  return createYoga({ schema, context: () => ({ caller }), plugins: [useStepUp()], logging: false, maskedErrors: true });
}

async function run(yoga: ReturnType<typeof server>, query: string, accept = 'application/graphql-response+json') {
  const res = await yoga.fetch('http://test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, challenge: res.headers.get('www-authenticate'), body: (await res.json()) as any };
}

describe('spec Multi-factor rules 6 / RFC 9470: @stepUp marks', () => {
  it('the schema marks setLegalHold (phishing-resistant) and removePasskey (fresh sign-in), matching the exported constants', () => {
    expect(Object.fromEntries(stepUpMarks(buildSchema()))).toEqual({
      'Mutation.setLegalHold': LEGAL_HOLD_STEP_UP,
      'Mutation.removePasskey': CREDENTIAL_CHANGE_STEP_UP,
    });
  });

  it('a marked field whose requirement is not met is null with INSUFFICIENT_USER_AUTHENTICATION; the rest of the answer stands', async () => {
    const weak = server({ acr: 'urn:latchkey:acr:1fa', authTime: NOW - 3600 });
    const res = await run(weak, '{ plain strong }');
    expect(res.status).toBe(401);
    expect(res.challenge).toBe(
      'Bearer error="insufficient_user_authentication", error_description="A different authentication level is required", acr_values="urn:latchkey:acr:phr"',
    );
    expect(res.body).toEqual({
      data: { plain: 'p', strong: null },
      errors: [
        {
          message: 'A different authentication level is required.',
          locations: [{ line: 1, column: 9 }],
          path: ['strong'],
          extensions: { code: 'INSUFFICIENT_USER_AUTHENTICATION', acr_values: 'urn:latchkey:acr:phr' },
        },
      ],
    });
    const json = await run(weak, '{ plain strong }', 'application/json');
    expect(json.status).toBe(200);
    expect(json.body).toEqual(res.body);
  });

  it('two unmet marks in one operation: each error states its own requirement, the one header what meets both', async () => {
    const res = await run(server({ acr: null, authTime: NOW - 301 }), '{ fresh strong }');
    expect(res.status).toBe(401);
    expect(res.challenge).toBe(
      'Bearer error="insufficient_user_authentication", error_description="A different authentication level is required", acr_values="urn:latchkey:acr:phr", max_age=300',
    );
    expect(res.body.errors.map((e: any) => e.extensions)).toEqual([
      { code: 'INSUFFICIENT_USER_AUTHENTICATION', max_age: 300 },
      { code: 'INSUFFICIENT_USER_AUTHENTICATION', acr_values: 'urn:latchkey:acr:phr' },
    ]);
  });

  it('a token that meets the requirement runs the resolver', async () => {
    const res = await run(server({ acr: 'urn:latchkey:acr:phr', authTime: NOW - 300 }), '{ open fresh strong plain }');
    expect(res).toEqual({ status: 200, challenge: null, body: { data: { open: 'o', fresh: 'f', strong: 's', plain: 'p' } } });
  });

  it('start-up refuses an unknown level and a public field that asks for a step-up', () => {
    const bad = (sdl: string) => () =>
      applyStepUpRules(
        createSchema({
          typeDefs: `directive @public on FIELD_DEFINITION | OBJECT\ndirective @stepUp(acr: String, maxAge: Int) on FIELD_DEFINITION\n${sdl}`,
        }),
      );
    expect(bad('type Query { x: String @stepUp(acr: "urn:latchkey:acr:otp") }')).toThrow(
      /Query.x @stepUp: acr "urn:latchkey:acr:otp" is not a known level/,
    );
    expect(bad('type Query { x: String @public @stepUp(maxAge: 5) }')).toThrow(/Query.x: a @public field cannot ask for @stepUp/);
    expect(bad('type Query { x: String @stepUp }')).toThrow(/acr, maxAge or both/);
  });
});
