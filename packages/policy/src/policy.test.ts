import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AuthorizationDenied,
  authorize,
  binding,
  can,
  createRoleHierarchy,
  definePolicy,
  DENIAL_CHANNEL,
  denialToHttp,
  onDenied,
  type DenialEvent,
} from './index.js';

interface User {
  id: string;
  role: 'OWNER' | 'ADMIN' | 'EDITOR' | 'VIEWER';
  superAdmin?: boolean;
}
interface Doc {
  ownerId: string;
  legalHold: boolean;
}

const roles = createRoleHierarchy(['OWNER', 'ADMIN', 'EDITOR', 'VIEWER']);

const DocumentPolicy = definePolicy('DocumentPolicy', {
  before: (user: User | null) => (user?.superAdmin ? true : undefined),
  abilities: {
    read: (user: User | null, _doc: Doc) => user !== null,
    update: (user: User | null, doc: Doc) => user !== null && (doc.ownerId === user.id || roles.grants(user.role, 'EDITOR')),
    delete: binding((user: User | null, doc: Doc) => !doc.legalHold && user !== null && roles.grants(user.role, 'ADMIN')),
    truthy: (_user: User | null) => 'yes',
    explode: (_user: User | null): boolean => {
      throw new Error('bug');
    },
  },
});

const alice: User = { id: 'alice', role: 'OWNER' };
const bob: User = { id: 'bob', role: 'VIEWER' };
const root: User = { id: 'root', role: 'VIEWER', superAdmin: true };
const doc: Doc = { ownerId: 'alice', legalHold: false };
const held: Doc = { ownerId: 'alice', legalHold: true };

const seen: DenialEvent[] = [];
const stop = onDenied((event) => seen.push(event));
afterEach(() => {
  seen.length = 0;
});

function denial(run: () => void): AuthorizationDenied {
  try {
    run();
  } catch (error) {
    if (error instanceof AuthorizationDenied) return error;
    throw error;
  }
  throw new Error('expected a denial');
}

describe('spec Authorization 7: a role grants itself and every role below it', () => {
  it('OWNER > ADMIN > EDITOR > VIEWER', () => {
    expect(roles.grants('OWNER', 'VIEWER')).toBe(true);
    expect(roles.grants('ADMIN', 'ADMIN')).toBe(true);
    expect(roles.grants('EDITOR', 'ADMIN')).toBe(false);
    expect(roles.grants('VIEWER', 'EDITOR')).toBe(false);
    expect(roles.grants(undefined, 'VIEWER')).toBe(false);
    expect(roles.grants('SUPERUSER', 'VIEWER')).toBe(false);
  });
});

describe('spec Authorization 4-5: 401 for a guest, 403 for a known user', () => {
  it('a guest denied by an ability gets unauthenticated/401; null, undefined and false are all guests', () => {
    for (const guest of [null, undefined, false] as const) {
      const error = denial(() => authorize(guest, DocumentPolicy.read, [doc]));
      expect(error).toMatchObject({ reason: 'unauthenticated', status: 401, policy: 'DocumentPolicy', ability: 'read' });
    }
  });

  it('a known user without permission gets forbidden/403', () => {
    const error = denial(() => authorize(bob, DocumentPolicy.update, [doc]));
    expect(error).toMatchObject({ reason: 'forbidden', status: 403 });
  });

  it('the denial message names neither the policy nor the ability (spec Events 3)', () => {
    const error = denial(() => authorize(bob, DocumentPolicy.update, [doc]));
    expect(error.message).not.toMatch(/DocumentPolicy|update/);
  });
});

describe('spec Authorization 8: only the boolean true allows; before hooks; binding abilities', () => {
  it('a truthy non-boolean result denies', () => {
    expect(can(alice, DocumentPolicy.truthy)).toBe(false);
  });

  it('the before hook may allow (super-admin) ...', () => {
    expect(can(root, DocumentPolicy.update, doc)).toBe(true);
    expect(can(root, DocumentPolicy.delete, doc)).toBe(false); // binding: decided by the ability alone
  });

  it('... but a binding rule binds everyone: legal hold beats the super-admin and the owner', () => {
    expect(can({ ...root, role: 'OWNER' }, DocumentPolicy.delete, held)).toBe(false);
    expect(can(alice, DocumentPolicy.delete, held)).toBe(false);
    expect(can(alice, DocumentPolicy.delete, doc)).toBe(true);
  });

  it('a hook that returns false denies, one that returns undefined defers', () => {
    const Locked = definePolicy('Locked', {
      before: (user: User | null) => (user?.id === 'bob' ? false : undefined),
      abilities: { read: (_user: User | null) => true },
    });
    expect(can(bob, Locked.read)).toBe(false);
    expect(can(alice, Locked.read)).toBe(true);
  });
});

describe('spec Authorization 9: abilities are singletons taking per-request state as arguments', () => {
  it('the same frozen ability object serves every call', () => {
    expect(Object.isFrozen(DocumentPolicy.update)).toBe(true);
    expect(DocumentPolicy.update).toBe(DocumentPolicy.update);
    expect(can(alice, DocumentPolicy.update, doc)).toBe(true);
    expect(can(bob, DocumentPolicy.update, { ...doc, ownerId: 'bob' })).toBe(true);
  });
});

describe('spec Authorization 10 and Events 2: can() only answers', () => {
  it('never throws, even when a check does, and publishes nothing', () => {
    expect(can(alice, DocumentPolicy.explode)).toBe(false);
    expect(can(null, DocumentPolicy.read, doc)).toBe(false);
    expect(seen).toHaveLength(0);
  });
});

describe('spec Events 2: every denial by authorize is published, on the stream and the diagnostics channel', () => {
  it('the event carries type, policy, ability, reason, user, args and handler', () => {
    const channelEvents: unknown[] = [];
    const onMessage = (message: unknown) => channelEvents.push(message);
    subscribe(DENIAL_CHANNEL, onMessage);
    try {
      denial(() => authorize(bob, DocumentPolicy.update, [doc], { handler: 'DocumentService.update' }));
      denial(() => authorize(null, DocumentPolicy.read, [doc], { handler: 'GET /api/documents/:id' }));
    } finally {
      unsubscribe(DENIAL_CHANNEL, onMessage);
    }
    const expected = [
      {
        type: 'denied',
        policy: 'DocumentPolicy',
        ability: 'update',
        reason: 'forbidden',
        user: bob,
        args: [doc],
        handler: 'DocumentService.update',
      },
      {
        type: 'denied',
        policy: 'DocumentPolicy',
        ability: 'read',
        reason: 'unauthenticated',
        user: null,
        args: [doc],
        handler: 'GET /api/documents/:id',
      },
    ];
    expect(seen).toEqual(expected);
    expect(channelEvents).toEqual(expected);
  });

  it('an allowed authorize publishes nothing, and a throwing observer does not change the outcome', () => {
    authorize(alice, DocumentPolicy.update, [doc]);
    expect(seen).toHaveLength(0);
    const stopThrowing = onDenied(() => {
      throw new Error('observer bug');
    });
    try {
      expect(denial(() => authorize(bob, DocumentPolicy.update, [doc])).status).toBe(403);
    } finally {
      stopThrowing();
    }
  });

  it('unsubscribing stops delivery', () => {
    stop();
    denial(() => authorize(bob, DocumentPolicy.update, [doc]));
    expect(seen).toHaveLength(0);
  });
});

describe('abilities are typed by their checks', () => {
  it('a missing record argument is a type error (and a denial at run time)', () => {
    // @ts-expect-error update needs the document
    expect(can(alice, DocumentPolicy.update)).toBe(false);
  });
});

describe('REST edge: a denial becomes {statusCode, message, error} with 401 or 403', () => {
  it('names neither the policy nor the ability', () => {
    expect(denialToHttp(denial(() => authorize(null, DocumentPolicy.read, [doc])))).toEqual({
      status: 401,
      body: { statusCode: 401, message: 'Authentication is required.', error: 'Unauthorized' },
    });
    expect(denialToHttp(denial(() => authorize(bob, DocumentPolicy.update, [doc]))).body).toEqual({
      statusCode: 403,
      message: 'You are not allowed to do this.',
      error: 'Forbidden',
    });
  });
});

describe('scopes narrow what an ability allows (delegated access)', () => {
  interface Caller extends User {
    scopes?: ReadonlySet<string> | null;
  }
  const NotePolicy = definePolicy('NotePolicy', {
    before: (user: Caller | null) => (user?.superAdmin ? true : undefined),
    scopes: { read: 'notes:read', erase: 'notes:write' },
    abilities: {
      read: (user: Caller | null) => user !== null,
      erase: binding((user: Caller | null) => user !== null && roles.grants(user.role, 'ADMIN')),
      count: (user: Caller | null) => user !== null,
    },
  });
  const admin = (scopes?: ReadonlySet<string> | null): Caller => ({ id: 'a', role: 'ADMIN', scopes });

  it("an ability that names a scope allows only a token holding it, whatever the caller's rights, a super-admin's and a binding ability's included", () => {
    expect(can(admin(new Set(['notes:read'])), NotePolicy.read)).toBe(true);
    expect(can(admin(new Set(['notes:read'])), NotePolicy.erase)).toBe(false);
    expect(can({ ...admin(new Set(['notes:read'])), superAdmin: true }, NotePolicy.erase)).toBe(false);
    expect(can(admin(new Set(['notes:write'])), NotePolicy.erase)).toBe(true);
    expect(() => authorize(admin(new Set()), NotePolicy.read, [])).toThrow(AuthorizationDenied);
  });

  it('a scope never adds a right, an ability naming none ignores scopes, and a caller scopes do not restrict holds them all', () => {
    expect(can({ id: 'v', role: 'VIEWER', scopes: new Set(['notes:write']) }, NotePolicy.erase)).toBe(false);
    expect(can(admin(new Set()), NotePolicy.count)).toBe(true);
    expect(can(admin(null), NotePolicy.erase)).toBe(true);
    expect(can(admin(), NotePolicy.erase)).toBe(true);
  });
});
