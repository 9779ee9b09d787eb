import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onFreePort } from './support/browser-session.js';
import { TestPki } from './support/x509.js';
import { COST_REPORTED } from './support/cost.js';
import { getGraphQL, postGraphQL, startTestService, type TestService } from './support/service.js';

const JSON_TYPE = 'application/json';
const GQL_TYPE = 'application/graphql-response+json';

let service: TestService;
let url: string;
let token: string;
beforeAll(async () => {
  service = await startTestService();
  url = service.graphqlUrl;
  token = await service.token('user-1');
});
afterAll(() => service?.stop());

describe('spec "Response media types" and "HTTP status codes"', () => {
  for (const accept of [JSON_TYPE, GQL_TYPE]) {
    it(`executed request answers 200 with Content-Type ${accept}`, async () => {
      const res = await postGraphQL(url, { query: '{ status { service version } }' }, { accept });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(`${accept}; charset=utf-8`);
      expect(res.json).toEqual({ data: { status: { service: 'latchkey', version: '0.1.0-test' } }, extensions: COST_REPORTED });
    });
  }

  it('no Accept header means application/json', async () => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': JSON_TYPE }, body: '{"query":"{ __typename }"}' });
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await res.json()).toEqual({ data: { __typename: 'Query' }, extensions: COST_REPORTED });
  });

  it('unparsable query: application/json -> 200, errors with locations, no data, no path', async () => {
    const res = await postGraphQL(url, { query: '{ status {' }, { accept: JSON_TYPE });
    expect(res.status).toBe(200);
    expect(res.json.data).toBeUndefined();
    expect(res.json.errors[0].locations[0]).toEqual({ line: 1, column: 11 });
    expect(res.json.errors[0].path).toBeUndefined();
    expect(res.json.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
  });

  it('unparsable query: application/graphql-response+json -> 400', async () => {
    const res = await postGraphQL(url, { query: 'query {' }, { accept: GQL_TYPE });
    expect(res.status).toBe(400);
    expect(res.json.data).toBeUndefined();
    expect(res.json.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
  });

  it('invalid document (unknown field): 200 under application/json, 400 under graphql-response+json, locations, no data', async () => {
    for (const [accept, status] of [
      [JSON_TYPE, 200],
      [GQL_TYPE, 400],
    ] as const) {
      const res = await postGraphQL(url, { query: '{ status { nope } }' }, { accept });
      expect(res.status).toBe(status);
      expect(res.json.data).toBeUndefined();
      expect(res.json.errors[0].locations).toEqual([{ line: 1, column: 12 }]);
      expect(res.json.errors[0].path).toBeUndefined();
      expect(res.json.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    }
  });

  it('several operations without operationName is a request error rejected before execution (400, BAD_REQUEST)', async () => {
    const query = 'query A { __typename } query B { __typename }';
    for (const accept of [JSON_TYPE, GQL_TYPE]) {
      const res = await postGraphQL(url, { query }, { accept });
      expect(res.status).toBe(400);
      expect(res.json.data).toBeUndefined();
      expect(res.json.errors[0].extensions.code).toBe('BAD_REQUEST');
    }
    const unknown = await postGraphQL(url, { query, operationName: 'C' });
    expect(unknown.status).toBe(400);
    const chosen = await postGraphQL(url, { query, operationName: 'B' });
    expect(chosen.json).toEqual({ data: { __typename: 'Query' }, extensions: COST_REPORTED });
  });

  it('missing query is not well-formed: 400 under both media types (GraphQL-over-HTTP, graphql-http audits)', async () => {
    for (const accept of [JSON_TYPE, GQL_TYPE]) {
      const res = await postGraphQL(url, { variables: {} }, { accept });
      expect(res.status).toBe(400);
      expect(res.json.errors[0].extensions.code).toBe('BAD_REQUEST');
      expect(res.json.data).toBeUndefined();
    }
  });

  it.each([
    ['non-string query', { query: 1 }],
    ['array variables', { query: '{ __typename }', variables: [1] }],
    ['string extensions', { query: '{ __typename }', extensions: 'x' }],
    ['unknown parameter', { query: '{ __typename }', qeury: 'x' }],
    ['number operationName', { query: '{ __typename }', operationName: 5 }],
  ])('malformed parameters (%s) -> 400 BAD_REQUEST', async (_name, body) => {
    const res = await postGraphQL(url, body as never, { accept: JSON_TYPE });
    expect(res.status).toBe(400);
    expect(res.json.errors[0].extensions.code).toBe('BAD_REQUEST');
  });

  it('malformed JSON body -> 400 under both media types', async () => {
    for (const accept of [JSON_TYPE, GQL_TYPE]) {
      const res = await postGraphQL(url, '{"query": ', { accept });
      expect(res.status).toBe(400);
      expect(res.json.errors[0].extensions.code).toBe('BAD_REQUEST');
    }
  });

  it('empty POST body -> 400', async () => {
    const res = await postGraphQL(url, '', { accept: GQL_TYPE });
    expect(res.status).toBe(400);
  });

  it('variable coercion failure: 200 under application/json, 400 under graphql-response+json, BAD_USER_INPUT', async () => {
    const query = 'query ($skip: Boolean!) { status @skip(if: $skip) { service } }';
    for (const [accept, status] of [
      [JSON_TYPE, 200],
      [GQL_TYPE, 400],
    ] as const) {
      const res = await postGraphQL(url, { query, variables: { skip: 'not a boolean' } }, { accept });
      expect(res.status).toBe(status);
      expect(res.json.data).toBeUndefined();
      expect(res.json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    }
  });

  it('an Accept that allows neither JSON media type -> 406 with an error body', async () => {
    for (const accept of ['text/plain', 'application/xml, text/csv']) {
      const res = await postGraphQL(url, { query: '{ __typename }' }, { accept });
      expect(res.status).toBe(406);
      expect(res.json.errors[0].extensions.code).toBe('BAD_REQUEST');
    }
    const wildcard = await postGraphQL(url, { query: '{ __typename }' }, { accept: 'text/plain, */*;q=0.1' });
    expect(wildcard.status).toBe(200);
  });

  it('unroutable path -> 404, unsupported method -> 405 with Allow', async () => {
    const missing = await fetch(`${service.url}/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ statusCode: 404, message: 'Not Found', error: 'Not Found' });
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const res = await fetch(url, { method, headers: { 'content-type': JSON_TYPE }, body: '{"query":"{ __typename }"}' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, POST, OPTIONS');
      expect((await res.json()).errors[0].extensions.code).toBe('METHOD_NOT_ALLOWED');
    }
  });

  it('a response has data or errors or both, never neither; extensions never leak internal http details', async () => {
    const bodies = [{ query: '{ __typename }' }, { query: '{' }, { query: '{ nope }' }, { query: '{ viewer { subject } }' }];
    for (const body of bodies) {
      const res = await postGraphQL(url, body);
      expect('data' in res.json || 'errors' in res.json).toBe(true);
      expect(res.text).not.toContain('"http"');
      expect(res.text).not.toContain('unexpected');
    }
  });

  it('content type of the request body may be application/graphql-response+json or carry a charset', async () => {
    for (const type of [GQL_TYPE, 'application/json; charset=utf-8', 'Application/JSON']) {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': type }, body: '{"query":"{ __typename }"}' });
      expect(res.status).toBe(200);
    }
  });
});

describe('requests node:http cannot take still get a clear JSON error', () => {
  it('headers over the 16 KiB ceiling -> 431 with {statusCode, message, error}', async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': JSON_TYPE, 'x-padding': 'a'.repeat(20_000) },
      body: '{"query":"{ __typename }"}',
    });
    expect(res.status).toBe(431);
    expect(await res.json()).toEqual({
      statusCode: 431,
      message: 'The request headers are too large.',
      error: 'Request Header Fields Too Large',
    });
  });

  it('a malformed request line -> 400 with {statusCode, message, error}', async () => {
    const { connect } = await import('node:net');
    const target = new URL(url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(target.port), target.hostname, () => socket.write('GARBAGE\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer.startsWith('HTTP/1.1 400 Bad Request')).toBe(true);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      statusCode: 400,
      message: 'The request could not be parsed.',
      error: 'Bad Request',
    });
  });
});

describe('CONNECT gets an answer', () => {
  /** Sends `request` on a fresh socket (plain, or TLS when `tls` is given) and reads until the server closes it. */
  async function exchange(port: number, request: string, tls?: { ca: string }): Promise<{ text: string; closed: boolean }> {
    const { connect } = await import('node:net');
    const { connect: connectTls } = await import('node:tls');
    return new Promise((resolve, reject) => {
      const socket = tls
        ? connectTls({ port, host: '127.0.0.1', servername: 'localhost', ca: tls.ca }, () => socket.write(request))
        : connect(port, '127.0.0.1', () => socket.write(request));
      let text = '';
      const timer = setTimeout(() => {
        socket.destroy();
        resolve({ text, closed: false });
      }, 5_000);
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => {
        clearTimeout(timer);
        resolve({ text, closed: true });
      });
      socket.on('error', reject);
    });
  }

  function expect405({ text, closed }: { text: string; closed: boolean }) {
    expect(text.split('\r\n')[0]).toBe('HTTP/1.1 405 Method Not Allowed');
    const head = text.slice(0, text.indexOf('\r\n\r\n')).toLowerCase();
    expect(head).toMatch(/\r\nallow: get, head, post, delete, options\r\n/);
    expect(head).toContain('\r\nconnection: close');
    expect(head).toContain('\r\ncontent-type: application/json; charset=utf-8');
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual({
      statusCode: 405,
      message: 'CONNECT is not supported: this server is no proxy.',
      error: 'Method Not Allowed',
    });
    expect(closed).toBe(true);
  }

  it('CONNECT (authority form or a path) -> 405 with Allow and {statusCode, message, error}, then the connection closes', async () => {
    const port = Number(new URL(url).port);
    expect405(await exchange(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'));
    expect405(await exchange(port, 'CONNECT /graphql HTTP/1.1\r\nHost: localhost\r\n\r\n'));
    // Bytes sent after the CONNECT (a tunnelled TLS hello, say) change nothing.
    expect405(await exchange(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n\x16\x03\x01\x02\x00'));
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
  });

  it('the HTTPS listener (TLS_PORT) answers CONNECT the same way', async () => {
    const pki = new TestPki();
    try {
      const authority = pki.authority('ca', '/CN=Latchkey Test CA');
      const server = pki.issue('server', authority, '/CN=localhost', ['DNS:localhost', 'IP:127.0.0.1']);
      const { tlsPort, tlsService } = await onFreePort(async (tlsPort) => ({
        tlsPort,
        tlsService: await startTestService({ TLS_PORT: String(tlsPort), TLS_CERT_FILE: server.certFile, TLS_KEY_FILE: server.keyFile }),
      }));
      try {
        expect405(await exchange(tlsPort, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', { ca: authority.cert }));
      } finally {
        await tlsService.stop();
      }
    } finally {
      pki.remove();
    }
  });
});

describe('spec "GET": queries only, parameters URL-encoded', () => {
  it('GET with query, variables and operationName executes', async () => {
    const res = await getGraphQL(url, {
      query: 'query Q($skip: Boolean!) { status @skip(if: $skip) { service } __typename }',
      variables: JSON.stringify({ skip: false }),
      operationName: 'Q',
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ data: { status: { service: 'latchkey' }, __typename: 'Query' } });
  });

  it('a mutation is never accepted on GET: 405 with Allow: POST (spec Limits 4)', async () => {
    for (const accept of [JSON_TYPE, GQL_TYPE]) {
      const res = await getGraphQL(url, { query: 'mutation { __typename }' }, { accept });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.json.errors[0].extensions.code).toBe('METHOD_NOT_ALLOWED');
      expect(res.json.data).toBeUndefined();
    }
  });

  it('GET with variables that are not JSON -> 400 BAD_REQUEST, never 500', async () => {
    for (const name of ['variables', 'extensions']) {
      const res = await getGraphQL(url, { query: '{ __typename }', [name]: '{not json' });
      expect(res.status).toBe(400);
      expect(res.json.errors[0].extensions.code).toBe('BAD_REQUEST');
    }
  });

  it('GET without query -> 400', async () => {
    const res = await getGraphQL(url, {});
    expect(res.status).toBe(400);
  });

  it('GET longer than the URL ceiling -> 414 (spec Limits 1)', async () => {
    const query = `{ ${'__typename '.repeat(1000)}}`;
    const res = await getGraphQL(url, { query });
    expect(res.status).toBe(414);
    expect(res.json.errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('batching (JSON array of requests)', () => {
  it('answers an array in the same order', async () => {
    const res = await postGraphQL(url, [
      { query: '{ status { service } }' },
      { query: 'query Second { __typename }' },
      { query: '{ status { version } }' },
    ]);
    expect(res.status).toBe(200);
    expect(res.json).toEqual([
      { data: { status: { service: 'latchkey' } }, extensions: COST_REPORTED },
      { data: { __typename: 'Query' }, extensions: COST_REPORTED },
      { data: { status: { version: '0.1.0-test' } }, extensions: COST_REPORTED },
    ]);
  });

  it('a mix of valid and invalid entries: each answered in place, the valid ones executed', async () => {
    const res = await postGraphQL(
      url,
      [
        { query: '{ __typename }' },
        { query: '{' },
        { nope: 1 },
        { query: '{ viewer { subject } }' },
        { query: '{ status { service } }' },
      ] as never,
      { token },
    );
    expect(res.status).toBe(200);
    expect(res.json).toHaveLength(5);
    expect(res.json[0]).toEqual({ data: { __typename: 'Query' }, extensions: COST_REPORTED });
    expect(res.json[1].errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(res.json[2].errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(res.json[3]).toEqual({ data: { viewer: { subject: 'user-1' } }, extensions: COST_REPORTED });
    expect(res.json[4]).toEqual({ data: { status: { service: 'latchkey' } }, extensions: COST_REPORTED });
  });

  it('more than the batch limit (10) -> 413 PAYLOAD_TOO_LARGE, nothing executed', async () => {
    const res = await postGraphQL(
      url,
      Array.from({ length: 11 }, () => ({ query: '{ __typename }' })),
    );
    expect(res.status).toBe(413);
    expect(res.json.errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
    expect(res.json.data).toBeUndefined();
  });

  it('an empty batch is refused with 400 BAD_REQUEST', async () => {
    const res = await postGraphQL(url, []);
    expect(res.status).toBe(400);
    expect(res.json.errors[0].extensions.code).toBe('BAD_REQUEST');
  });
});

describe('masked errors (DESIGN: INTERNAL_SERVER_ERROR, details only in the log)', () => {
  it('an unexpected resolver failure is null at its path with a masked error; siblings still returned (spec Errors 1)', async () => {
    const broken = await startTestService();
    try {
      const userToken = await broken.token('6f1c0a52-6f0e-4c39-9a43-3e1f1d2f4b10');
      // The account lookup reads `users`; without that table its statement fails: a bug, not an outage (an
      // unreachable database is SERVICE_UNAVAILABLE, see database-faults.test.ts).
      await broken.database.db.execute(sql`alter table users rename to users_gone`);
      const res = await postGraphQL(
        broken.graphqlUrl,
        { query: '{ viewer { subject user { id } } status { service } }' },
        { token: userToken },
      );
      expect(res.status).toBe(200);
      expect(res.json.data).toEqual({
        viewer: { subject: '6f1c0a52-6f0e-4c39-9a43-3e1f1d2f4b10', user: null },
        status: { service: 'latchkey' },
      });
      expect(res.json.errors).toEqual([
        {
          message: 'Internal server error.',
          locations: [{ line: 1, column: 20 }],
          path: ['viewer', 'user'],
          extensions: { code: 'INTERNAL_SERVER_ERROR' },
        },
      ]);
      expect(res.text).not.toMatch(/stack|at .*\.js|closed|ended|ECONN/i);
      const logged = broken.logs.find((line) => line['msg'] === 'resolver failed');
      expect(logged?.['reqId']).toBe(res.headers.get('x-request-id'));
      expect((logged?.['err'] as { stack?: string } | undefined)?.stack).toBeTruthy();
    } finally {
      await broken.stop();
    }
  });
});
