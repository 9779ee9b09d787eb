import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { authorize, definePolicy, useAuthorizationErrors } from './index.js';

interface User {
  id: string;
}
const SecretPolicy = definePolicy('SecretPolicy', {
  abilities: { read: (user: User | null) => user?.id === 'owner' },
});

// A real Yoga server with error masking on, as in apps/api: denials must come out as
// UNAUTHENTICATED/FORBIDDEN at their path, not as masked INTERNAL_SERVER_ERROR.
const yoga = createYoga<{ user?: User }>({
  logging: false,
  schema: createSchema<{ user?: User }>({
    typeDefs: 'type Query { open: String! secret: String broken: String }',
    resolvers: {
      Query: {
        open: () => 'visible',
        secret: (_source, _args, { user }) => {
          authorize(user ?? null, SecretPolicy.read, [], { handler: 'Query.secret' });
          return 'classified';
        },
        broken: () => {
          throw new Error('database exploded');
        },
      },
    },
  }),
  plugins: [useAuthorizationErrors()],
});

async function ask(user?: User) {
  const res = await yoga.fetch(
    'http://test/graphql',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: '{ open secret broken }' }),
    },
    { user },
  );
  return {
    status: res.status,
    text: await res.clone().text(),
    body: (await res.json()) as {
      data: Record<string, unknown>;
      errors: { message: string; path: string[]; extensions: { code: string } }[];
    },
  };
}

describe('spec Events 3 and Authorization 12: a denial leaves a resolver as a GraphQL error', () => {
  it('guest: UNAUTHENTICATED at the field path, siblings kept, status 200', async () => {
    const { status, body, text } = await ask();
    expect(status).toBe(200);
    expect(body.data).toEqual({ open: 'visible', secret: null, broken: null });
    const secret = body.errors.find((e) => e.path[0] === 'secret');
    expect(secret?.extensions.code).toBe('UNAUTHENTICATED');
    expect(text).not.toMatch(/SecretPolicy|"read"/);
  });

  it('known user: FORBIDDEN at the field path', async () => {
    const { body } = await ask({ id: 'someone' });
    expect(body.errors.find((e) => e.path[0] === 'secret')?.extensions.code).toBe('FORBIDDEN');
  });

  it('allowed: the value, and other errors stay masked', async () => {
    const { body } = await ask({ id: 'owner' });
    expect(body.data.secret).toBe('classified');
    const broken = body.errors.find((e) => e.path[0] === 'broken');
    expect(broken?.extensions.code).toBe('INTERNAL_SERVER_ERROR');
    expect(broken?.message).not.toContain('database');
  });
});
