import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type DiscardBound, discardBody } from './discard-body.js';

/** A server that refuses every request at once, before reading its body, discarding it within `bound`. */
async function refusing(bound: DiscardBound): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    discardBody(req, res, bound);
    res.writeHead(413, { 'content-type': 'text/plain', 'content-length': 7 });
    res.end('refused');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

interface Seen {
  /** what the client read */
  received: string;
  /** body bytes the client's writes completed */
  written: number;
  /** every write completed, and the server ended the connection with a FIN (no reset) */
  clean: boolean;
}

/**
 * A raw client: a POST with `head`'s framing, then `chunks` body chunks (Infinity: until the server ends the
 * connection) as fast as the connection takes them, or with `every` one each `every` ms (a slow sender).
 */
function send(port: number, head: string, chunks: number, chunk: Buffer = Buffer.alloc(16 * 1024, 'a'), every?: number): Promise<Seen> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let written = 0;
    let failed = false;
    let sent = 0;
    socket.on('data', (data: Buffer) => (received += data.toString('latin1')));
    socket.on('error', () => (failed = true));
    socket.on('close', () => resolve({ received, written, clean: !failed && sent === chunks }));
    socket.write(`POST / HTTP/1.1\r\nhost: localhost\r\n${head}\r\n`);
    if (every !== undefined) {
      const drip = setInterval(() => {
        if (socket.destroyed) return clearInterval(drip);
        sent++;
        socket.write(chunk, (error) => {
          if (!error) written += chunk.length;
        });
      }, every);
      return;
    }
    const more = () => {
      while (sent < chunks && !socket.destroyed) {
        sent++;
        const ok = socket.write(chunk, (error) => {
          if (!error) written += chunk.length;
        });
        if (!ok) return void socket.once('drain', more);
      }
    };
    more();
  });
}

describe('discardBody: the rest of a refused body is read and thrown away within a bound', () => {
  it('a body within the bound: every write completes, the answer arrives, and the connection ends cleanly', async () => {
    const started = await refusing({ bytes: 4 * 1024 * 1024, ms: 60_000 });
    server = started.server;
    const size = 2 * 1024 * 1024;
    const seen = await send(started.port, `content-length: ${size}\r\n`, size / (16 * 1024));
    expect(seen.received).toMatch(/^HTTP\/1\.1 413 /);
    expect(seen.received.toLowerCase()).toContain('connection: close');
    expect(seen.received).toMatch(/refused$/);
    expect(seen).toMatchObject({ written: size, clean: true });
  });

  it('past the byte bound the connection is cut', async () => {
    const started = await refusing({ bytes: 256 * 1024, ms: 60_000 });
    server = started.server;
    const seen = await send(started.port, 'transfer-encoding: chunked\r\n', Number.POSITIVE_INFINITY, chunkOf(16 * 1024));
    // Resolved: the server ended the connection.
    expect(seen.received).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('a slow sender still sending when the time bound ends is cut', async () => {
    const started = await refusing({ bytes: 1024 * 1024 * 1024, ms: 200 });
    server = started.server;
    const seen = await send(started.port, 'transfer-encoding: chunked\r\n', Number.POSITIVE_INFINITY, chunkOf(1), 5);
    // Resolved: the server ended the connection.
    expect(seen.received).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('a declared length beyond the bound is not read: the connection closes right after the answer', async () => {
    const started = await refusing({ bytes: 64 * 1024, ms: 60_000 });
    server = started.server;
    // Sends nothing of the body: the server closes without waiting for it.
    const seen = await send(started.port, `content-length: ${128 * 1024}\r\n`, 0);
    expect(seen.received).toMatch(/^HTTP\/1\.1 413 [\s\S]*refused$/);
  });
});

/** One chunk of a chunked body carrying `size` bytes. */
function chunkOf(size: number): Buffer {
  return Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), Buffer.alloc(size, 'a'), Buffer.from('\r\n')]);
}
