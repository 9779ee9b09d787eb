import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookDelivery } from '../index.js';

const SECRET = 'a'.repeat(16) + 'b'.repeat(16);
const received: { body: string; signature: string | undefined }[] = [];
let status = 204;
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      received.push({ body, signature: req.headers['x-latchkey-signature'] as string | undefined });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('webhook delivery (SMS and other channels)', () => {
  it('posts the message as JSON with an HMAC-SHA256 signature of the body', async () => {
    const delivery = createWebhookDelivery({ url, secret: SECRET });
    await delivery.deliver(
      {
        to: 'alice@acme.test',
        token: 'tok',
        magicLink: 'http://localhost:4000/login/ott?token=tok',
        expiresAt: new Date('2026-11-22T12:05:00Z'),
      },
      {},
    );
    const [call] = received;
    expect(JSON.parse(call!.body)).toMatchObject({
      to: 'alice@acme.test',
      magicLink: 'http://localhost:4000/login/ott?token=tok',
      expiresAt: '2026-11-22T12:05:00.000Z',
      subject: 'Your Latchkey sign-in link',
    });
    expect(call!.signature).toBe(`sha256=${createHmac('sha256', SECRET).update(call!.body).digest('hex')}`);
  });

  it('a receiver that refuses makes delivery fail; a short secret is refused at start-up', async () => {
    status = 500;
    await expect(
      createWebhookDelivery({ url, secret: SECRET }).deliver(
        { to: 'x@y.z', token: 't', magicLink: 'http://x/login/ott?token=t', expiresAt: new Date() },
        {},
      ),
    ).rejects.toThrow('answered 500');
    expect(() => createWebhookDelivery({ url, secret: 'short' })).toThrow(RangeError);
  });
});
