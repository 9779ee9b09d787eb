import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { seedDemoData } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { COST_REPORTED } from './support/cost.js';
import { demoOf, type Demo } from './support/demo.js';
import { startTestService, type TestService } from './support/service.js';
import { overWebSocket, wsClient } from './support/subscriptions.js';

const MANIFEST = createRequire(import.meta.url).resolve('@latchkey/client/persisted-documents.json');
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A raw graphql-transport-ws socket: the protocol by hand, to send what a well-behaved client would not. */
async function rawSocket(url: string, headers: Record<string, string> = {}) {
  const socket = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws', { headers });
  const messages: any[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  socket.on('message', (data) => messages.push(JSON.parse(String(data))));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
    socket.once('unexpected-response', (_req, res) =>
      reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })),
    );
  });
  return { socket, messages, closed };
}

describe("the WebSocket path applies the HTTP endpoint's rules itself", () => {
  let service: TestService;
  let demo: Demo;
  beforeAll(async () => {
    service = await startTestService({ WS_MAX_MESSAGE_BYTES: '4096', MAX_DEPTH: '6' });
    await seedDemoData(service.database);
    demo = await demoOf(service);
  });
  afterAll(() => service?.stop());

  it('a message over WS_MAX_MESSAGE_BYTES closes the connection (1009), instead of the ws default of 100 MiB', async () => {
    const { socket, closed } = await rawSocket(service.graphqlUrl);
    socket.send(JSON.stringify({ type: 'connection_init', payload: { padding: 'x'.repeat(5000) } }));
    expect((await closed).code).toBe(1009);
  });

  it('the same validation limits: a query deeper than MAX_DEPTH is refused with QUERY_TOO_COMPLEX; unparsable text with a located error', async () => {
    const client = wsClient(service.graphqlUrl, await demo.token('alice'));
    const deep = overWebSocket(client, {
      query:
        'subscription { documentChanged(organization: "acme") { document { organization { id } owner { memberships { organization { id } user { memberships { role } } } } } } }',
    });
    await deep.ended();
    expect(deep.error).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'QUERY_TOO_COMPLEX' }) })]);
    const broken = overWebSocket(client, { query: 'subscription {' });
    await broken.ended();
    expect(broken.error).toEqual([expect.objectContaining({ locations: [{ line: 1, column: 15 }] })]);
    await client.dispose();
  });

  it("a browser origin that is not allowed is refused at the upgrade (403); PUBLIC_URL's origin is allowed; other paths do not upgrade (404)", async () => {
    await expect(rawSocket(service.graphqlUrl, { origin: 'https://evil.test' })).rejects.toMatchObject({ status: 403 });
    const allowed = await rawSocket(service.graphqlUrl, { origin: new URL(service.config.http.publicUrl).origin });
    allowed.socket.close();
    await expect(rawSocket(`${service.url}/api/documents`)).rejects.toMatchObject({ status: 404 });
  });

  it('a subprotocol other than graphql-transport-ws is not spoken: the handshake names none, so the client gives up', async () => {
    const socket = new WebSocket(service.graphqlUrl.replace(/^http/, 'ws'), 'graphql-ws');
    const failure = await new Promise<Error>((resolve) => socket.once('error', resolve));
    expect(failure.message).toBe('Server sent no subprotocol');
  });

  it("without connection_init in time, or with a second one, the protocol's close codes", async () => {
    const { socket, closed } = await rawSocket(service.graphqlUrl);
    socket.send(JSON.stringify({ type: 'connection_init' }));
    socket.send(JSON.stringify({ type: 'connection_init' }));
    expect((await closed).code).toBe(4429);
    const garbage = await rawSocket(service.graphqlUrl);
    garbage.socket.send('not json');
    expect((await garbage.closed).code).toBe(4400);
  });
});

describe('the WebSocket path in PERSISTED_MODE=allowlist', () => {
  let service: TestService;
  let demo: Demo;
  beforeAll(async () => {
    service = await startTestService({ PERSISTED_MODE: 'allowlist', PERSISTED_ALLOWLIST_FILE: MANIFEST });
    await seedDemoData(service.database);
    demo = await demoOf(service);
  });
  afterAll(() => service?.stop());

  it('query text is PERSISTED_QUERY_NOT_ALLOWED; an allowlisted id runs; an unknown id is PERSISTED_QUERY_NOT_FOUND', async () => {
    const client = wsClient(service.graphqlUrl, await demo.token('alice'));
    const text = overWebSocket(client, { query: 'subscription { documentChanged(organization: "acme") { kind } }' });
    await text.ended();
    expect(text.error).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'PERSISTED_QUERY_NOT_ALLOWED' }) })]);
    const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as Record<string, string>;
    const [id, query] = Object.entries(manifest).find(([, body]) => body.startsWith('query Status'))!;
    const known = overWebSocket(client, {
      query: '',
      extensions: { persistedQuery: { version: 1, sha256Hash: id.slice('sha256:'.length) } },
    });
    await known.ended();
    expect(known.results).toEqual([{ data: { status: expect.objectContaining({ service: 'latchkey' }) }, extensions: COST_REPORTED }]);
    expect(sha256(query)).toBe(id.slice('sha256:'.length));
    const unknown = overWebSocket(client, { query: '', extensions: { persistedQuery: { version: 1, sha256Hash: 'f'.repeat(64) } } });
    await unknown.ended();
    expect(unknown.error).toEqual([
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'PERSISTED_QUERY_NOT_FOUND' }) }),
    ]);
    await client.dispose();
  });
});
