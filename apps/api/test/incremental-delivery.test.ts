import { connect } from 'node:net';
import { seedDemoData } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoOf, type Demo } from './support/demo.js';
import { postGraphQL, startTestService, type TestService } from './support/service.js';
import { COST_REPORTED } from './support/cost.js';
import { multipartParts, ssePayloads } from './support/incremental.js';

let service: TestService;
let demo: Demo;
beforeAll(async () => {
  service = await startTestService();
  await seedDemoData(service.database);
  demo = await demoOf(service);
});
afterAll(() => service?.stop());

async function incremental(query: string, token: string | undefined, accept: string) {
  const response = await fetch(service.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, type: response.headers.get('content-type') ?? '', body: await response.text() };
}

const DEFERRED_NOTES =
  '{ documents(first: 2, filter: { status: [PUBLISHED] }) { edges { node { title ... @defer(label: "notes") { internalNotes } } } } }';

describe('@defer and @stream (spec Versioning 2: incremental delivery) over multipart/mixed and SSE', () => {
  it('@defer: the initial payload first (hasNext), then each deferred part at its path, the last with hasNext false', async () => {
    const answer = await incremental(DEFERRED_NOTES, await demo.token('alice'), 'multipart/mixed');
    expect(answer.status).toBe(200);
    expect(answer.type).toContain('multipart/mixed');
    const parts = multipartParts(answer.body);
    expect(parts[0]).toMatchObject({
      data: { documents: { edges: [{ node: { title: expect.any(String) } }, { node: { title: expect.any(String) } }] } },
      hasNext: true,
    });
    expect(parts[0].data.documents.edges[0].node).not.toHaveProperty('internalNotes');
    const delivered = parts.slice(1).flatMap((part) => part.incremental ?? []);
    expect(delivered.map((part: any) => part.path).sort()).toEqual([
      ['documents', 'edges', 0, 'node'],
      ['documents', 'edges', 1, 'node'],
    ]);
    expect(delivered.every((part: any) => 'internalNotes' in part.data && part.label === 'notes')).toBe(true);
    expect(parts.at(-1).hasNext).toBe(false);
  });

  it("deferred fields are checked like any other: a VIEWER gets FORBIDDEN at the deferred field's own path, the rest intact", async () => {
    const parts = multipartParts((await incremental(DEFERRED_NOTES, await demo.token('bob'), 'multipart/mixed')).body);
    const delivered = parts.slice(1).flatMap((part) => part.incremental ?? []);
    expect(delivered).toHaveLength(2);
    for (const part of delivered) {
      expect(part.data).toEqual({ internalNotes: null });
      expect(part.errors).toEqual([
        expect.objectContaining({
          path: [...part.path, 'internalNotes'],
          extensions: { code: 'FORBIDDEN' },
          message: expect.not.stringMatching(/Policy/),
        }),
      ]);
    }
    // A guest never gets that far: the route-level refusal, whole.
    const guest = await incremental(DEFERRED_NOTES, undefined, 'multipart/mixed');
    expect(guest.body).toContain('UNAUTHENTICATED');
    expect(guest.body).not.toContain('hasNext');
  });

  it('@stream: the first items at once, the rest as items at their list index, in order', async () => {
    const parts = multipartParts(
      (
        await incremental(
          '{ documents(first: 3) { edges @stream(initialCount: 1) { node { title } } } }',
          await demo.token('alice'),
          'multipart/mixed',
        )
      ).body,
    );
    expect(parts[0].data.documents.edges).toHaveLength(1);
    const items = parts.slice(1).flatMap((part) => part.incremental ?? []);
    expect(items.map((part: any) => part.path)).toEqual([
      ['documents', 'edges', 1],
      ['documents', 'edges', 2],
    ]);
    expect(items.every((part: any) => part.items.length === 1 && typeof part.items[0].node.title === 'string')).toBe(true);
    expect(parts.at(-1).hasNext).toBe(false);
  });

  it("the directives' own validation rules apply to documents that use them (@stream on a field that is no list: a validation error)", async () => {
    const answer = await incremental('{ status @stream { service } }', undefined, 'multipart/mixed');
    expect(answer.body).toContain('GRAPHQL_VALIDATION_FAILED');
    expect(answer.body).toMatch(/Stream directive cannot be used on non-list field/);
  });

  it('a client that accepts only single JSON answers gets 406 with a body saying what to accept (never an empty answer)', async () => {
    for (const accept of ['application/json', 'application/graphql-response+json']) {
      const answer = await incremental(DEFERRED_NOTES, await demo.token('alice'), accept);
      expect(answer.status).toBe(406);
      expect(JSON.parse(answer.body)).toEqual({
        errors: [
          { message: expect.stringContaining('send Accept: multipart/mixed or text/event-stream'), extensions: { code: 'BAD_REQUEST' } },
        ],
      });
    }
  });

  it('the same over Server-Sent Events: next events in order, then complete', async () => {
    const answer = await incremental(DEFERRED_NOTES, await demo.token('alice'), 'text/event-stream');
    expect(answer.type).toContain('text/event-stream');
    const { payloads, completed } = ssePayloads(answer.body);
    expect(payloads[0].hasNext).toBe(true);
    expect(payloads.at(-1).hasNext).toBe(false);
    expect(payloads.slice(1).flatMap((payload) => payload.incremental)).toHaveLength(2);
    expect(completed).toBe(true);
  });
});

describe('streamed answers honour Connection: close', () => {
  /**
   * A raw HTTP/1.1 connection of its own: requests are written as they are (pipelined when several), and `until`
   * resolves once what the server wrote, and whether it ended the connection, satisfy `ready` (the test's timeout
   * bounds the wait: no read window, so a slow machine is never mistaken for a connection kept or closed).
   */
  function rawConnection() {
    const target = new URL(service.graphqlUrl);
    const socket = connect(Number(target.port), target.hostname);
    let text = '';
    let ended = false;
    const waiting = new Set<() => void>();
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      for (const check of waiting) check();
    });
    socket.on('end', () => {
      ended = true;
      for (const check of waiting) check();
    });
    return {
      send: (request: string) => socket.write(request),
      until: (ready: (text: string, ended: boolean) => boolean) =>
        new Promise<{ text: string; ended: boolean }>((resolve, reject) => {
          const check = () => {
            if (!ready(text, ended))
              return ended ? reject(new Error(`connection ended before the answer was complete:\n${text}`)) : undefined;
            waiting.delete(check);
            resolve({ text, ended });
          };
          waiting.add(check);
          check();
        }),
      close: () => socket.destroy(),
    };
  }
  const request = (query: string, accept: string, token: string, connection: 'close' | 'keep-alive') => {
    const body = JSON.stringify({ query });
    return (
      `POST /graphql HTTP/1.1\r\nhost: ${new URL(service.graphqlUrl).host}\r\ncontent-type: application/json\r\naccept: ${accept}\r\n` +
      `authorization: Bearer ${token}\r\nconnection: ${connection}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    );
  };
  /** The Connection header of the first answer in `text`. */
  const connectionOf = (text: string) => /\r\nconnection: ([^\r]*)/i.exec(text.slice(0, text.indexOf('\r\n\r\n')))?.[1]?.toLowerCase();

  it('multipart @defer and SSE answers say Connection: close and end the connection when the client asked for close', async () => {
    const token = await demo.token('alice');
    for (const [accept, last] of [
      ['multipart/mixed', '"hasNext":false'],
      ['text/event-stream', 'event: complete'],
    ] as const) {
      const connection = rawConnection();
      connection.send(request(DEFERRED_NOTES, accept, token, 'close'));
      const { text } = await connection.until((_text, ended) => ended);
      expect(text).toContain(last);
      expect(connectionOf(text)).toBe('close');
    }
    // A subscription's stream stays open: its headers already say the connection ends with it. Open it is, since an
    // event made after its headers arrives on it.
    const subscription = rawConnection();
    try {
      subscription.send(request('subscription { documentChanged(organization: "acme") { kind } }', 'text/event-stream', token, 'close'));
      const { text: head } = await subscription.until((text) => text.includes('\r\n\r\n'));
      expect(connectionOf(head)).toBe('close');
      const created = await postGraphQL(
        service.graphqlUrl,
        { query: `mutation { createDocument(input: { organization: "acme", title: "Streamed ${Date.now()}" }) { document { id } } }` },
        { token },
      );
      expect(created.json.errors).toBeUndefined();
      const { ended } = await subscription.until((text) => text.includes('event: next'));
      expect(ended).toBe(false);
    } finally {
      subscription.close();
    }
  });

  /** The whole answer to `{ __typename }`: its data, then the budget's report (extensions.cost). */
  const TYPENAME_ANSWER =
    /\{"data":\{"__typename":"Query"\},"extensions":\{"cost":\{"requestedQueryCost":\d+,"actualQueryCost":\d+,"throttleStatus":\{[^{}]*\}\}\}\}/;

  it('with Connection: keep-alive the same answers keep the connection alive (node decides, as for every other answer)', async () => {
    const token = await demo.token('alice');
    for (const accept of ['multipart/mixed', 'text/event-stream']) {
      // Pipelined: the second request is answered only if the connection outlived the first answer.
      const connection = rawConnection();
      try {
        connection.send(request(DEFERRED_NOTES, accept, token, 'keep-alive'));
        connection.send(request('{ __typename }', 'application/json', token, 'keep-alive'));
        const { text } = await connection.until((text) => TYPENAME_ANSWER.test(text));
        expect(connectionOf(text)).toBe('keep-alive');
        expect(text.match(/^HTTP\/1\.1 200/gm)).toHaveLength(2);
      } finally {
        connection.close();
      }
    }
  });
});

describe('@oneOf input objects (spec Versioning 2: the one-of input rule): documentBy(lookup: DocumentLookup!)', () => {
  it("exactly one key: by id, or by organization and title; another tenant's or a missing one is NOT_FOUND", async () => {
    const alice = await demo.token('alice');
    const id = demo.documentId.get('Quarterly plan')!;
    const byId = await postGraphQL(service.graphqlUrl, { query: `{ documentBy(lookup: { id: "${id}" }) { title } }` }, { token: alice });
    expect(byId.json).toEqual({ data: { documentBy: { title: 'Quarterly plan' } }, extensions: COST_REPORTED });
    const byTitle = await postGraphQL(
      service.graphqlUrl,
      {
        query: 'query ($key: DocumentLookup!) { documentBy(lookup: $key) { id } }',
        variables: { key: { title: { organization: 'acme', title: 'Quarterly plan' } } },
      },
      { token: alice },
    );
    expect(byTitle.json).toEqual({ data: { documentBy: { id } }, extensions: COST_REPORTED });
    for (const key of [
      { organization: 'globex', title: 'Quarterly plan' },
      { organization: 'acme', title: 'No such title' },
    ]) {
      const hidden = await postGraphQL(
        service.graphqlUrl,
        { query: 'query ($key: DocumentLookup!) { documentBy(lookup: $key) { id } }', variables: { key: { title: key } } },
        { token: alice },
      );
      expect(hidden.json.errors[0].extensions.code).toBe('NOT_FOUND');
    }
  });

  it.each([
    ['zero members', '{ documentBy(lookup: {}) { id } }'],
    [
      'two members',
      '{ documentBy(lookup: { id: "00000000-0000-4000-8000-000000000000", title: { organization: "acme", title: "x" } }) { id } }',
    ],
    ['a null member', '{ documentBy(lookup: { id: null }) { id } }'],
  ])('%s in a literal: a validation error (400 / 200 by media type), nothing executes', async (_name, query) => {
    const token = await demo.token('alice');
    const strict = await postGraphQL(service.graphqlUrl, { query }, { token });
    expect(strict.status).toBe(400);
    expect(strict.json.data).toBeUndefined();
    expect(strict.json.errors[0]).toMatchObject({
      message: expect.stringMatching(/OneOf Input Object "DocumentLookup" must specify exactly one key|must be non-null/),
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
    });
    expect((await postGraphQL(service.graphqlUrl, { query }, { token, accept: 'application/json' })).status).toBe(200);
  });

  it('two members in a variable: BAD_USER_INPUT (400 / 200 by media type), nothing executes', async () => {
    const token = await demo.token('alice');
    const body = {
      query: 'query ($key: DocumentLookup!) { documentBy(lookup: $key) { id } }',
      variables: { key: { id: demo.documentId.get('Quarterly plan'), title: { organization: 'acme', title: 'Quarterly plan' } } },
    };
    const strict = await postGraphQL(service.graphqlUrl, body, { token });
    expect(strict.status).toBe(400);
    expect(strict.json.errors[0]).toMatchObject({
      message: expect.stringContaining('Exactly one key must be specified for OneOf type "DocumentLookup"'),
      extensions: { code: 'BAD_USER_INPUT' },
    });
    expect((await postGraphQL(service.graphqlUrl, body, { token, accept: 'application/json' })).status).toBe(200);
  });
});
