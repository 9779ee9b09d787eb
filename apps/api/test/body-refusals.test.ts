import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { BODY_DISCARD_BOUND } from '@latchkey/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoOf, reseed, STEPPED_UP } from './support/demo.js';
import { startTestService, type TestService } from './support/service.js';

/**
 * A refused body reaches every client as its refusal: the server answers (413, or a REST route's 401 before it reads
 * the body), then reads and throws away the rest of the body within a bound before it closes, so a client still
 * writing (Node's fetch, undici, under every Node GraphQL client) finishes its write and reads the answer instead of
 * failing with EPIPE. Past the bound the connection is cut, and nothing discarded is kept.
 */

const MiB = 1024 * 1024;
const ROUNDS = 20;
const run = promisify(execFile);

let service: TestService;
let aliceToken: string;
beforeAll(async () => {
  service = await startTestService();
  await reseed(service.database);
  aliceToken = await (await demoOf(service)).token('alice', STEPPED_UP);
});
afterAll(() => service?.stop());

interface Target {
  name: string;
  path: string;
  headers: () => Record<string, string>;
  status: number;
  /** what the answer's body must say */
  check: (text: string) => void;
}

const TARGETS: Target[] = [
  {
    name: 'POST /graphql',
    path: '/graphql',
    headers: () => ({ 'content-type': 'application/json', accept: 'application/graphql-response+json' }),
    status: 413,
    check: (text) => expect(JSON.parse(text).errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE'),
  },
  {
    name: 'POST /api/documents, signed in',
    path: '/api/documents',
    headers: () => ({ 'content-type': 'application/json', authorization: `Bearer ${aliceToken}` }),
    status: 413,
    check: (text) => expect(JSON.parse(text)).toMatchObject({ statusCode: 413, error: 'Payload Too Large' }),
  },
  {
    name: 'POST /api/documents without a token (the caller is checked before the body)',
    path: '/api/documents',
    headers: () => ({ 'content-type': 'application/json' }),
    status: 401,
    check: (text) => expect(JSON.parse(text)).toMatchObject({ statusCode: 401, error: 'Unauthorized' }),
  },
  {
    name: 'the sign-in form POST /login/ott',
    path: '/login/ott',
    headers: () => ({ 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }),
    status: 413,
    check: (text) => expect(JSON.parse(text)).toMatchObject({ statusCode: 413, error: 'Payload Too Large' }),
  },
];

/**
 * The client, in a process of its own as a real one is: a client in the server's process shares its event loop, and
 * the reset that loses the answer did not show there. Posts `rounds` bodies of `size` bytes with Node's fetch, one
 * after the other, with a Content-Length or chunked (a stream, `duplex: 'half'`), and prints each outcome: the status
 * and body read, or the failure.
 */
const CLIENT = `
const { url, headers, size, chunked, rounds } = JSON.parse(process.argv[1]);
const filler = Buffer.alloc(64 * 1024, 'a');
const fixed = chunked ? undefined : Buffer.alloc(size, 'a');
function stream() {
  let left = size;
  return new ReadableStream({
    pull(controller) {
      if (left <= 0) return controller.close();
      const n = Math.min(left, filler.length);
      left -= n;
      controller.enqueue(new Uint8Array(filler.subarray(0, n)));
    },
  });
}
const outcomes = [];
for (let round = 0; round < rounds; round++) {
  try {
    const response = await fetch(url, { method: 'POST', headers, body: fixed ?? stream(), duplex: 'half' });
    outcomes.push({ status: response.status, text: await response.text() });
  } catch (error) {
    outcomes.push({ failure: String(error.message) + ' ' + String(error.cause?.code ?? error.cause?.message ?? '') });
  }
}
process.stdout.write(JSON.stringify(outcomes));
`;

interface Outcome {
  status?: number;
  text?: string;
  failure?: string;
}

async function postFromOutside(target: Target, size: number, chunked: boolean): Promise<Outcome[]> {
  const input = { url: `${service.url}${target.path}`, headers: target.headers(), size, chunked, rounds: ROUNDS };
  const { stdout } = await run(process.execPath, ['--input-type=module', '--eval', CLIENT, JSON.stringify(input)], {
    maxBuffer: 16 * MiB,
  });
  return JSON.parse(stdout) as Outcome[];
}

const BODIES = [
  { label: '2 MiB with a Content-Length', size: 2 * MiB, chunked: false },
  { label: '3 MiB with a Content-Length', size: 3 * MiB, chunked: false },
  { label: '10 MiB with a Content-Length', size: 10 * MiB, chunked: false },
  { label: '20 MiB chunked', size: 20 * MiB, chunked: true },
] as const;

describe('an oversized body reaches Node fetch as its refusal, not as a network failure', () => {
  for (const { label, size, chunked } of BODIES) {
    it(`${label}: /graphql, a REST route (413, and 401 without a token) and a sign-in form, ${ROUNDS} of ${ROUNDS} each`, async () => {
      // The four clients post at the same time: the server is busy with the others while it refuses each.
      const results = await Promise.all(TARGETS.map((target) => postFromOutside(target, size, chunked)));
      TARGETS.forEach((target, i) => {
        const outcomes = results[i]!;
        expect(
          outcomes.map((outcome) => outcome.failure ?? outcome.status),
          target.name,
        ).toEqual(Array(ROUNDS).fill(target.status));
        for (const outcome of outcomes) target.check(outcome.text!);
      });
      // Generous: the test waits for the answers, whatever the machine's speed.
    }, 300_000);
  }
});

/** What a raw client saw: the bytes it read, and how many it handed to the connection before it ended. */
interface Endless {
  received: string;
  written: number;
}

/**
 * Sends a chunked POST whose body never ends, as fast as the connection takes it (or, with `drip`, one small chunk
 * each time the previous one has been written and `drip` says so), until the server ends the connection.
 */
function sendForever(path: string, headers: Record<string, string>, drip?: (next: () => void) => void): Promise<Endless> {
  const port = Number(new URL(service.url).port);
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let written = 0;
    let ended = false;
    const chunk = Buffer.concat([Buffer.from(`10000\r\n`), Buffer.alloc(0x10000, 'a'), Buffer.from('\r\n')]);
    const small = Buffer.from('1\r\na\r\n');
    socket.on('data', (data: Buffer) => (received += data.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      ended = true;
      resolve({ received, written });
    });
    const head = Object.entries({ host: 'localhost', 'transfer-encoding': 'chunked', ...headers })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n`);
    // Past the body limit at once, then on: fast (every time the socket drains) or one byte at a time.
    for (let i = 0; i < 32; i++) socket.write(chunk);
    written += 32 * 0x10000;
    const fast = () => {
      while (!ended && socket.write(chunk)) written += 0x10000;
      if (!ended) {
        written += 0x10000;
        socket.once('drain', fast);
      }
    };
    const slow = () => {
      if (ended) return;
      socket.write(small, () => {
        written += 1;
        drip!(slow);
      });
    };
    if (drip) slow();
    else fast();
  });
}

function heapAndBuffers(): number {
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

describe('past the bound the connection is cut, and nothing discarded is kept', () => {
  it(`a sender that writes forever gets its 413, then the connection ends after at most ${BODY_DISCARD_BOUND.bytes / MiB} MiB more; memory stays flat`, async () => {
    setFlagsFromString('--expose-gc');
    const before = heapAndBuffers();
    const writers = 3;
    for (let i = 0; i < writers; i++) {
      const { received, written } = await sendForever('/graphql', { 'content-type': 'application/json' });
      expect(received).toMatch(/^HTTP\/1\.1 413 /);
      expect(received).toContain('PAYLOAD_TOO_LARGE');
      // The server read on after its answer (far more than the sockets' buffers hold: closed at once, the writer
      // gets no further than those), then cut the connection: at the bound's bytes, or its time on a slow machine.
      expect(written).toBeGreaterThan(16 * MiB);
    }
    // Every writer pushed about BODY_DISCARD_BOUND.bytes through the server: had any of it been kept, the heap and
    // buffers would have grown by that much at least. Half of one bound leaves room for everything else.
    const grown = heapAndBuffers() - before;
    expect(grown).toBeLessThan(BODY_DISCARD_BOUND.bytes / 2);
  }, 300_000);

  it('a REST route that answers 401 before reading: a sender that writes forever is cut as well', async () => {
    const { received } = await sendForever('/api/documents', { 'content-type': 'application/json' });
    expect(received).toMatch(/^HTTP\/1\.1 401 /);
  }, 120_000);

  it(`a slow-drip sender past the limit is cut: at the bound's ${BODY_DISCARD_BOUND.ms / 1000} s, the request timeout (30 s) behind it`, async () => {
    // One byte every 5 ms once the previous one was written: a slow sender (its pace, not a wait of the test's).
    const { received } = await sendForever('/graphql', { 'content-type': 'application/json' }, (next) => setTimeout(next, 5));
    // Resolved: the server ended the connection; the test's timeout is well past both of its cuts.
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
  }, 60_000);
});
