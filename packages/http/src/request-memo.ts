/**
 * Per-request state, the one way this workspace keeps it: a memo on the request's own object (node's
 * `IncomingMessage`, a GraphQL context, a REST request, a WebSocket connection's context, the provider's Koa
 * context, one subscription event; or an object made for one request, such as the caller's attributes), where a
 * `WeakMap` keyed by that object would otherwise be used. It answers the same (one value per object, gone with the
 * object), but costs the garbage collector nothing. A `WeakMap` stays where its keys outlive requests (caches keyed
 * by a parsed document, a schema, a token's scope list); AsyncLocalStorage only where a library calls back without
 * the request (the database deadline of oidc-provider's requests).
 *
 * Why not a WeakMap: V8's young-generation collector (the scavenger) keeps every value of a WeakMap alive while it
 * runs, and drops an entry only once it finds the key dead. A value that leads back to its key (the caller's
 * attributes naming the request they were read for, which holds them) therefore kept each finished request alive
 * through every young collection, and the second one moved it to the old generation; a value that leads to another
 * WeakMap's key (the attributes, and the account row read with them) made a chain that lived one collection per
 * link. A request's objects held as plain properties die with the request in the first collection after it.
 * Measured on `{ me { id } }` over PostgreSQL: 6.3 MB promoted at each young collection, 1.6-1.9 MB with the memos
 * (under 0.1 MB for a request that reads nothing; docs/performance.md, "The kept levers").
 *
 * The property is keyed by a symbol of this memo and not enumerable: it is not seen by `Object.keys`, spreads,
 * `JSON.stringify` or deep equality, so the object looks as it did to everything else.
 */
export interface RequestMemo<Value> {
  get(owner: object): Value | undefined;
  set(owner: object, value: Value): Value;
  has(owner: object): boolean;
}

/** A memo of its own (a symbol per call): two memos never see each other's values, as two WeakMaps would not. */
export function requestMemo<Value>(description: string): RequestMemo<Value> {
  const slot = Symbol(description);
  type Owner = { [slot]?: Value };
  return {
    get: (owner) => (owner as Owner)[slot],
    set(owner, value) {
      if (Object.hasOwn(owner, slot)) (owner as Owner)[slot] = value;
      else Object.defineProperty(owner, slot, { value, writable: true, configurable: true, enumerable: false });
      return value;
    },
    has: (owner) => Object.hasOwn(owner, slot),
  };
}
