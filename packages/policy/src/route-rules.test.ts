import { useGenericAuth } from '@envelop/generic-auth';
import { GraphQLError, type GraphQLSchema, parse } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { createRouteRules, useRouteRules } from './index.js';

const typeDefs = /* GraphQL */ `
  directive @public on FIELD_DEFINITION | OBJECT
  directive @auth(role: String) on FIELD_DEFINITION | OBJECT
  type Query {
    status: Status! @public
    secret: String
    hint: String @public
  }
  type Mutation {
    touch: Boolean
  }
  type Status @public {
    version: String!
    build: String @auth
  }
`;

const schema = createSchema({
  typeDefs,
  resolvers: {
    Query: { status: () => ({ version: '1', build: 'b' }), secret: () => 'hidden', hint: () => 'hi' },
    Mutation: { touch: () => true },
  },
});

describe('route rules (spec Authorization 1, 4, 7)', () => {
  const rules = createRouteRules();

  it("Authorization 1: a field is public when @public governs it, its own marks replacing its type's", () => {
    expect(rules.isPublic(schema, 'Query', 'status')).toBe(true);
    expect(rules.isPublic(schema, 'Status', 'version')).toBe(true);
    expect(rules.isPublic(schema, 'Status', 'build')).toBe(false); // its own @auth replaces the type's @public
    expect(rules.isPublic(schema, 'Query', 'secret')).toBe(false);
    expect(rules.isPublic(schema, 'Query', '__typename')).toBe(true);
  });

  it('Authorization 4: an operation needs sign-in when any field it selects (fragments included) is not public', () => {
    const of = (query: string) => rules.requirementsOf(schema, parse(query), undefined);
    expect(of('{ status { version } hint __typename }')).toEqual({ signIn: false, introspection: false, scopes: [] });
    expect(of('{ ...F } fragment F on Query { secret }')).toEqual({ signIn: true, introspection: false, scopes: [] });
    expect(of('{ __schema { queryType { name } } }')).toEqual({ signIn: false, introspection: true, scopes: [] });
  });

  it('requirements are judged once per document and operation name', () => {
    const document = parse('query A { hint } query B { secret }');
    const a = rules.requirementsOf(schema, document, 'A');
    expect(rules.requirementsOf(schema, document, 'A')).toBe(a);
    expect(rules.requirementsOf(schema, document, 'B').signIn).toBe(true);
  });
});

describe('the route check, with the caller resolved by @envelop/generic-auth (spec Authorization 4)', () => {
  type Context = { request: Request; caller?: { id: string } | null };
  const rules = createRouteRules();
  const refusal = () =>
    new GraphQLError('Sign in to perform this operation.', { extensions: { code: 'UNAUTHENTICATED', http: { status: 401, spec: true } } });
  let resolved = 0;
  let executed = 0;
  const yoga = createYoga<object, Context>({
    schema,
    plugins: [
      useGenericAuth({
        mode: 'resolve-only',
        contextFieldName: 'caller',
        resolveUserFn: ({ request }: Context) => {
          resolved++;
          return request.headers.get('authorization') === 'Bearer good' ? { id: 'u1' } : null;
        },
      }),
      useRouteRules<Context>({ rules, isGuest: (context) => context.caller === null, refusal }),
      { onExecute: () => void executed++ },
    ],
  });
  const post = (query: string, headers: Record<string, string> = {}) =>
    yoga.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
      body: JSON.stringify({ query }),
    });

  it("a guest's operation that selects a non-public field is refused whole: one error, no data key, 401, nothing run", async () => {
    resolved = 0;
    executed = 0;
    const res = await post('mutation { touch }');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      errors: [{ message: 'Sign in to perform this operation.', extensions: { code: 'UNAUTHENTICATED' } }],
    });
    const mixed = await post('{ hint secret status { build } }');
    const body = (await mixed.json()) as { errors: unknown[] };
    expect(body).not.toHaveProperty('data');
    expect(body.errors).toHaveLength(1);
    expect(resolved).toBe(2); // the caller is resolved once per operation
    expect(executed).toBe(0);
  });

  it('a guest may run an operation made of public fields only', async () => {
    const res = await post('{ hint status { version } __typename }');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { hint: 'hi', status: { version: '1' }, __typename: 'Query' } });
  });

  it('a signed-in caller passes the route check (role and ability rules are decided at the resolver)', async () => {
    const res = await post('{ secret status { build } }', { authorization: 'Bearer good' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { secret: 'hidden', status: { build: 'b' } } });
  });
});

describe('@scope: what a token must hold to select a field (delegated access)', () => {
  let resolved = 0;
  const scoped = createSchema({
    typeDefs: /* GraphQL */ `
      directive @public on FIELD_DEFINITION | OBJECT
      directive @scope(name: String!) on FIELD_DEFINITION | OBJECT
      type Query {
        status: String @public
        notes: [Note!]! @scope(name: "notes:read")
      }
      type Mutation {
        write: Boolean @scope(name: "notes:write")
      }
      type Note @scope(name: "notes:read") {
        text: String
        author: String @scope(name: "people:read")
      }
    `,
    resolvers: {
      Query: { status: () => 'ok', notes: () => ++resolved && [{ text: 't', author: 'a' }] },
      Mutation: { write: () => ++resolved > 0 },
    },
  });
  const rules = createRouteRules();
  const of = (query: string) => rules.requirementsOf(scoped, parse(query), undefined).scopes;

  it("every selected field's scope, its own mark replacing its type's, fragments included; public fields need none", () => {
    expect(of('{ status }')).toEqual([]);
    expect(of('{ notes { text } }')).toEqual(['notes:read']);
    expect(of('{ ...F } fragment F on Query { notes { author } }')).toEqual(['notes:read', 'people:read']);
    expect(of('mutation { write }')).toEqual(['notes:write']);
  });

  it('a signed-in caller whose token lacks one is refused whole, before anything runs; one scopes do not restrict passes', async () => {
    type Context = { request: Request; granted: ReadonlySet<string> | null };
    const yoga = createYoga<Record<string, unknown>, Context>({
      schema: scoped as GraphQLSchema,
      context: ({ request }) => ({
        request,
        granted: request.headers.get('x-scopes') === null ? null : new Set(request.headers.get('x-scopes')!.split(' ').filter(Boolean)),
      }),
      plugins: [
        useRouteRules<Context>({
          rules,
          isGuest: () => false,
          refusal: () => new GraphQLError('sign in'),
          grantedScopes: (context) => context.granted,
          scopeRefusal: (required, missing) => new GraphQLError(`needs ${required.join(' ')}; lacks ${missing.join(' ')}`),
        }),
      ],
    });
    const call = async (query: string, scopes?: string) => {
      const response = await yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(scopes === undefined ? {} : { 'x-scopes': scopes }) },
        body: JSON.stringify({ query }),
      });
      return (await response.json()) as { data?: unknown; errors?: { message: string }[] };
    };
    expect(await call('{ notes { text author } }', 'notes:read')).toEqual({
      errors: [{ message: 'needs notes:read people:read; lacks people:read' }],
    });
    expect(await call('mutation { write }', 'notes:read')).toEqual({ errors: [{ message: 'needs notes:write; lacks notes:write' }] });
    expect(resolved).toBe(0);
    expect(await call('{ notes { text } }', 'notes:read')).toEqual({ data: { notes: [{ text: 't' }] } });
    expect(await call('{ notes { author } }')).toEqual({ data: { notes: [{ author: 'a' }] } });
    expect(await call('{ status }', '')).toEqual({ data: { status: 'ok' } });
    expect(resolved).toBe(2);
  });
});
