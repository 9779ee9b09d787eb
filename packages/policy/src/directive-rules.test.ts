import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import {
  definePolicy,
  onDenied,
  useAuthorizationErrors,
  useDirectiveRules,
  fieldRulesOf,
  type DenialEvent,
  type DirectiveRulesContext,
} from './index.js';

interface User {
  id: string;
  role: 'ADMIN' | 'EDITOR' | 'VIEWER';
}
interface Note {
  id: string;
  owner: string;
  secret: string;
}
const RANK = { ADMIN: 3, EDITOR: 2, VIEWER: 1 } as const;

let noteChecks = 0;
const Policies = [
  definePolicy('NotePolicy', {
    abilities: {
      readSecret: (user: User | null, note: Note) => {
        noteChecks++;
        return user?.id === note.owner;
      },
    },
  }),
  definePolicy('RoutePolicy', {
    abilities: {
      role: (user: User | null, role: string) => user !== null && RANK[user.role] >= RANK[role as User['role']],
      beta: (user: User | null) => user?.id === 'tester',
    },
  }),
] as const;

const typeDefs = /* GraphQL */ `
  directive @public on FIELD_DEFINITION | OBJECT
  directive @auth(role: String) on FIELD_DEFINITION | OBJECT
  directive @can(ability: String!, silent: Boolean = false) on FIELD_DEFINITION | OBJECT
  type Query @auth(role: "EDITOR") {
    editorOnly: String
    adminOnly: String @auth(role: "ADMIN")
    anyone: String @auth
    open: String @public
    beta: String @can(ability: "RoutePolicy.beta")
    notes: [Note!]! @auth
  }
  type Note {
    id: ID!
    secret: String @can(ability: "NotePolicy.readSecret")
    hint: String @can(ability: "NotePolicy.readSecret", silent: true)
  }
`;
const NOTES: (Note & { hint: string })[] = [
  { id: '1', owner: 'ann', secret: 'a', hint: 'x' },
  { id: '2', owner: 'ed', secret: 'b', hint: 'y' },
  { id: '3', owner: 'ann', secret: 'c', hint: 'z' },
];

function server(fieldLevel: boolean) {
  let resolved = 0;
  const yoga = createYoga<DirectiveRulesContext<User>>({
    logging: false,
    schema: createSchema({
      typeDefs,
      resolvers: {
        Query: {
          editorOnly: () => {
            resolved++;
            return 'e';
          },
          adminOnly: () => {
            resolved++;
            return 'a';
          },
          anyone: () => 'x',
          open: () => 'o',
          beta: () => 'b',
          notes: () => NOTES,
        },
      },
    }),
    plugins: [
      useDirectiveRules<User>({
        policies: Policies,
        roleAbility: Policies[1].role,
        fieldLevel,
      }),
      useAuthorizationErrors(),
    ],
  });
  const ask = async (query: string, user: User | null) => {
    const res = await yoga.fetch(
      'http://test/graphql',
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify({ query }),
      },
      { subjectAtHand: () => user },
    );
    return { status: res.status, body: (await res.json()) as { data: any; errors?: { path: string[]; extensions: { code: string } }[] } };
  };
  return { ask, resolved: () => resolved };
}

const ann: User = { id: 'ann', role: 'EDITOR' };
const viewer: User = { id: 'vic', role: 'VIEWER' };
const admin: User = { id: 'ada', role: 'ADMIN' };

describe('route level from SDL metadata (spec Authorization 1, 4, 5, 7)', () => {
  it("rule 1: the field's own mark overrides its type's; @public on a field clears the type's mark", async () => {
    const { ask } = server(false);
    // Type says EDITOR; adminOnly says ADMIN (replaces, does not add); open is public; anyone needs only a sign-in.
    expect((await ask('{ editorOnly adminOnly anyone open }', ann)).body).toMatchObject({
      data: { editorOnly: 'e', adminOnly: null, anyone: 'x', open: 'o' },
      errors: [{ path: ['adminOnly'], extensions: { code: 'FORBIDDEN' } }],
    });
    expect((await ask('{ editorOnly adminOnly }', admin)).body).toEqual({ data: { editorOnly: 'e', adminOnly: 'a' } });
    expect((await ask('{ editorOnly anyone open }', viewer)).body).toMatchObject({
      data: { editorOnly: null, anyone: 'x', open: 'o' },
      errors: [{ path: ['editorOnly'], extensions: { code: 'FORBIDDEN' } }],
    });
  });

  it('rules 4-5: a guest is told UNAUTHENTICATED, a known user FORBIDDEN, and the resolver never runs', async () => {
    const { ask, resolved } = server(false);
    const guest = await ask('{ adminOnly open }', null);
    expect(guest.body).toMatchObject({
      data: { adminOnly: null, open: 'o' },
      errors: [{ path: ['adminOnly'], extensions: { code: 'UNAUTHENTICATED' } }],
    });
    const user = await ask('{ adminOnly }', ann);
    expect(user.body.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    expect(resolved()).toBe(0);
  });

  it('a named ability in @can is checked before the resolver and its denial is published', async () => {
    const { ask } = server(false);
    const events: DenialEvent[] = [];
    const stop = onDenied((event) => events.push(event));
    try {
      expect((await ask('{ beta }', { id: 'tester', role: 'VIEWER' })).body).toEqual({ data: { beta: 'b' } });
      expect((await ask('{ beta }', ann)).body.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    } finally {
      stop();
    }
    expect(events).toEqual([
      { type: 'denied', policy: 'RoutePolicy', ability: 'beta', reason: 'forbidden', user: ann, args: [], handler: 'Query.beta' },
    ]);
  });

  it('an unknown ability name fails at start-up, not at request time', () => {
    const broken = () =>
      createYoga({
        logging: false,
        schema: createSchema({ typeDefs: typeDefs.replace('RoutePolicy.beta', 'RoutePolicy.nope'), resolvers: {} }),
        plugins: [useDirectiveRules({ policies: Policies, roleAbility: Policies[1].role })],
      });
    expect(broken).toThrow(/RoutePolicy\.nope/);
  });
});

describe('field level (spec Authorization 3, 12, 13)', () => {
  it('rule 13: without field-level enforcement, marks on object fields are not checked', async () => {
    const { ask } = server(false);
    noteChecks = 0;
    const { body } = await ask('{ notes { id secret } }', ann);
    expect(body).toEqual({
      data: {
        notes: [
          { id: '1', secret: 'a' },
          { id: '2', secret: 'b' },
          { id: '3', secret: 'c' },
        ],
      },
    });
    expect(noteChecks).toBe(0);
  });

  it('rule 13: switched on, the check runs once per returned row and sees that row; rule 12: denied rows are null with FORBIDDEN at their path, the parent intact', async () => {
    const { ask } = server(true);
    noteChecks = 0;
    const { status, body } = await ask('{ notes { id secret } }', ann);
    expect(noteChecks).toBe(3);
    expect(status).toBe(200);
    expect(body.data).toEqual({
      notes: [
        { id: '1', secret: 'a' },
        { id: '2', secret: null },
        { id: '3', secret: 'c' },
      ],
    });
    expect(body.errors).toMatchObject([{ path: ['notes', 1, 'secret'], extensions: { code: 'FORBIDDEN' } }]);
  });

  it('rule 12: a silent field rule hides the value as null with no error, and still publishes the denial', async () => {
    const { ask } = server(true);
    const events: DenialEvent[] = [];
    const stop = onDenied((event) => events.push(event));
    try {
      const { body } = await ask('{ notes { id hint } }', ann);
      expect(body).toEqual({
        data: {
          notes: [
            { id: '1', hint: 'x' },
            { id: '2', hint: null },
            { id: '3', hint: 'z' },
          ],
        },
      });
    } finally {
      stop();
    }
    expect(events).toMatchObject([
      { policy: 'NotePolicy', ability: 'readSecret', reason: 'forbidden', handler: 'Note.hint', args: [{ id: '2' }] },
    ]);
  });
});

describe('field rules for an edge that shapes records itself (REST)', () => {
  const schema = createSchema({ typeDefs, resolvers: { Query: { notes: () => NOTES } } });
  const roleAbility = Policies[1].role as never;
  const rules = fieldRulesOf<User>(schema, 'Note', { policies: Policies, roleAbility });
  const ann: User = { id: 'ann', role: 'VIEWER' };

  it('are the marked fields of the type, read from the same @can marks GraphQL enforces', () => {
    expect(rules.map((rule) => rule.field)).toEqual(['secret', 'hint']);
  });

  it('allow a field its ability allows for this row and deny it otherwise, a guest included, publishing nothing', () => {
    const denials: DenialEvent[] = [];
    const stop = onDenied((event) => denials.push(event));
    try {
      const [secret] = rules;
      expect(secret!.allows(ann, NOTES[0])).toBe(true);
      expect(secret!.allows(ann, NOTES[1])).toBe(false);
      expect(secret!.allows(null, NOTES[0])).toBe(false);
      expect(denials).toEqual([]);
    } finally {
      stop();
    }
  });

  it('refuse a type the schema does not have as an object type', () => {
    expect(() => fieldRulesOf<User>(schema, 'Missing', { policies: Policies, roleAbility })).toThrow('Missing is not an object type');
  });
});
