import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

/** An echo server stands in for the database: what goes through the proxy comes back. */
let echo: Server;
let echoPort: number;
beforeAll(async () => {
  echo = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => echo.close(() => resolve())));

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Resolves with the next data, or 'silence' when none comes within `ms`. */
function nextData(socket: Socket, ms: number): Promise<string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.off('data', onData);
      resolve('silence');
    }, ms);
    const onData = (chunk: Buffer) => {
      clearTimeout(timer);
      resolve(chunk.toString());
    };
    socket.once('data', onData);
  });
}

describe('the fault-injection TCP proxy of the outage tests', () => {
  let proxy: TcpProxy;
  beforeAll(async () => {
    proxy = await startTcpProxy('127.0.0.1', echoPort);
  });
  afterAll(() => proxy.close());

  it('forwards both ways while healthy', async () => {
    const socket = await open(proxy.port);
    socket.write('ping');
    expect(await nextData(socket, 2000)).toBe('ping');
    socket.destroy();
  });

  it('drop(): open connections are reset and new ones refused, restore() listens again on the same port', async () => {
    const socket = await open(proxy.port);
    const closed = new Promise<string>((resolve) => socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? '')));
    await proxy.drop();
    expect(await closed).toBe('ECONNRESET');
    await expect(open(proxy.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await proxy.restore();
    const again = await open(proxy.port);
    again.write('back');
    expect(await nextData(again, 2000)).toBe('back');
    again.destroy();
  });

  it('blackhole(): nothing gets an answer, open or new, and what was held flows on after restore()', async () => {
    const before = await open(proxy.port);
    proxy.blackhole();
    before.write('held');
    expect(await nextData(before, 300)).toBe('silence');
    const during = await open(proxy.port); // accepted, as a kernel would, but never reaching the server
    during.write('queued');
    expect(await nextData(during, 300)).toBe('silence');
    const late = nextData(before, 2000);
    const lateNew = nextData(during, 2000);
    await proxy.restore();
    expect(await late).toBe('held');
    expect(await lateNew).toBe('queued');
    before.destroy();
    during.destroy();
  });
});
