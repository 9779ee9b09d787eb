import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postGraphQL, startTestService, type TestService } from './support/service.js';
import { COST_REPORTED } from './support/cost.js';

const GQL_TYPE = 'application/graphql-response+json';
const JSON_TYPE = 'application/json';

let service: TestService;
let url: string;
beforeAll(async () => {
  service = await startTestService({
    MAX_BODY_BYTES: '2048',
    MAX_DEPTH: '2',
    MAX_ALIASES: '3',
    MAX_TOKENS: '60',
    MAX_DIRECTIVES: '2',
    MAX_COST: '6',
  });
  url = service.graphqlUrl;
});
afterAll(() => service?.stop());

function expectTooComplex(res: Awaited<ReturnType<typeof postGraphQL>>, status: number, pattern: RegExp) {
  expect(res.status).toBe(status);
  expect(res.json.data).toBeUndefined();
  expect(res.json.errors).toHaveLength(1);
  expect(res.json.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
  expect(res.json.errors[0].message).toMatch(pattern);
}

describe('spec Limits 3: transport limits (body size, batch size) -> 413 under either media type', () => {
  it('a body over MAX_BODY_BYTES with Content-Length is refused 413 PAYLOAD_TOO_LARGE before it is read', async () => {
    const query = `{ __typename ${' '.repeat(3000)}}`;
    for (const accept of [JSON_TYPE, GQL_TYPE]) {
      const res = await postGraphQL(url, { query }, { accept });
      expect(res.status).toBe(413);
      expect(res.json.errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
    }
  });

  it('a chunked body (no Content-Length) is counted and refused once it passes the limit', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', (error) =>
        (error as NodeJS.ErrnoException).code === 'EPIPE' || (error as NodeJS.ErrnoException).code === 'ECONNRESET'
          ? undefined
          : reject(error),
      );
      req.write('{"query": "{ __typename ');
      for (let i = 0; i < 10; i++) req.write(' '.repeat(500));
      req.end('}"}');
    });
    expect(status).toBe(413);
  });

  it('a chunked body under the limit is accepted', async () => {
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.write('{"query": ');
      req.end('"{ __typename }"}');
    });
    expect(JSON.parse(body)).toEqual({ data: { __typename: 'Query' }, extensions: COST_REPORTED });
  });
});

describe('spec Limits 3: document limits are validation failures (400 graphql-response+json, 200 application/json)', () => {
  it('depth over MAX_DEPTH, fragments expanded', async () => {
    const query = '{ viewer { ...V } } fragment V on Viewer { user { id } }';
    expectTooComplex(await postGraphQL(url, { query }, { accept: GQL_TYPE }), 400, /depth 3 exceeds the limit of 2/);
    expectTooComplex(await postGraphQL(url, { query }, { accept: JSON_TYPE }), 200, /depth/);
    // depth 2 passes the limit (and is then refused for the guest, which proves the limit let it through)
    const ok = await postGraphQL(url, { query: '{ viewer { ... on Viewer { subject } } __typename }' }, { accept: GQL_TYPE });
    expect(ok.json.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('aliases over MAX_ALIASES', async () => {
    const query = '{ a: __typename b: __typename c: __typename d: __typename }';
    expectTooComplex(await postGraphQL(url, { query }, { accept: GQL_TYPE }), 400, /aliases/);
    expectTooComplex(await postGraphQL(url, { query }, { accept: JSON_TYPE }), 200, /aliases/);
  });

  it('tokens over MAX_TOKENS: refused while parsing', async () => {
    const query = `{ ${'__typename '.repeat(70)}}`;
    expectTooComplex(await postGraphQL(url, { query }, { accept: GQL_TYPE }), 400, /tokens/);
    expectTooComplex(await postGraphQL(url, { query }, { accept: JSON_TYPE }), 200, /tokens/);
  });

  it('directives over MAX_DIRECTIVES', async () => {
    const query = '{ __typename @skip(if: false) @include(if: true) status @skip(if: false) { service } }';
    expectTooComplex(await postGraphQL(url, { query }, { accept: GQL_TYPE }), 400, /directives/);
  });

  it('cost over MAX_COST', async () => {
    // status + 3 fields = 4 (ok); a second status selection under an alias pushes it to 8
    const ok = await postGraphQL(url, { query: '{ status { service version serverTime } }' });
    expect(ok.json.data.status.service).toBe('latchkey');
    const query = '{ status { service version serverTime } s: status { service version serverTime } }';
    expectTooComplex(await postGraphQL(url, { query }, { accept: GQL_TYPE }), 400, /cost 8 exceeds the limit of 6/);
    expectTooComplex(await postGraphQL(url, { query }, { accept: JSON_TYPE }), 200, /cost/);
  });

  it('a limit hit inside a batch fails only that entry', async () => {
    const res = await postGraphQL(url, [
      { query: '{ a: __typename b: __typename c: __typename d: __typename }' },
      { query: '{ __typename }' },
    ]);
    expect(res.status).toBe(200);
    expect(res.json[0].errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(res.json[1]).toEqual({ data: { __typename: 'Query' }, extensions: COST_REPORTED });
  });

  it('limits hold for signed-in callers too', async () => {
    const token = await service.token('user-1');
    const query = '{ viewer { ...V } } fragment V on Viewer { user { id } }';
    expectTooComplex(await postGraphQL(url, { query }, { token }), 400, /depth/);
  });
});
