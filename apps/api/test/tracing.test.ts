import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOwnDatabase } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSigningJwk } from '@latchkey/auth/tokens';
import { freePort } from './support/browser-session.js';
import { postGraphQL, serviceDataDir } from './support/service.js';

// A real api process (the built dist/src/main.js) exporting to an OTLP/HTTP receiver this test runs.
const DIST = fileURLToPath(new URL('../dist/src/', import.meta.url));

interface Export {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

interface OtlpSpan {
  name: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
  events?: { name: string; attributes?: { key: string; value: Record<string, unknown> }[] }[];
}

/** An OTLP/HTTP collector's trace endpoint, as far as this test needs one: it keeps what it is sent. */
function startReceiver(): Promise<{ server: Server; url: string; exports: Export[] }> {
  const exports: Export[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      exports.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exports })),
  );
}

const spansOf = (exports: Export[]): { resource: Record<string, unknown>; span: OtlpSpan }[] =>
  exports.flatMap(({ body }) =>
    (
      JSON.parse(body) as {
        resourceSpans: {
          resource: { attributes: { key: string; value: { stringValue?: string } }[] };
          scopeSpans: { spans: OtlpSpan[] }[];
        }[];
      }
    ).resourceSpans.flatMap((resourceSpans) => {
      const resource = Object.fromEntries(resourceSpans.resource.attributes.map(({ key, value }) => [key, value.stringValue]));
      return resourceSpans.scopeSpans.flatMap(({ spans }) => spans.map((span) => ({ resource, span })));
    }),
  );

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let child: ChildProcess;
let output = '';
let base: string;
let token: string;
let dataDir: string;
let dropDatabase: (() => Promise<void>) | undefined;
let exitCode: number | null = null;
const collectorKey = `collector-${randomUUID()}`;

beforeAll(async () => {
  receiver = await startReceiver();
  dataDir = serviceDataDir('tracing');
  const own = process.env['DATABASE_URL'] ? await createOwnDatabase(process.env['DATABASE_URL']) : undefined;
  dropDatabase = own?.drop;
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: base,
    DATA_DIR: dataDir,
    SIGNING_KEY: JSON.stringify(await generateSigningJwk()),
    LOG_LEVEL: 'info',
    ...(own ? { DATABASE_URL: own.url } : {}),
  };
  // Seeded and a token minted before the server opens the database (embedded PGlite admits one process).
  const cli = (...args: string[]) => {
    const result = spawnSync(process.execPath, [path.join(DIST, 'cli.js'), ...args], { env, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`latchkey ${args.join(' ')}: ${result.stderr}`);
    return result.stdout.trim();
  };
  cli('seed');
  token = cli('token', '--email', 'alice@acme.test', '--ttl', '600');
  child = spawn(process.execPath, [path.join(DIST, 'main.js')], {
    env: {
      ...env,
      OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/`,
      OTEL_SERVICE_NAME: 'latchkey-under-test',
      OTEL_EXPORTER_OTLP_HEADERS: `x-collector-key=${collectorKey}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.once('exit', (code) => (exitCode = code));
  for (let i = 0; i < 300; i++) {
    if ((await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200) return;
    if (exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the api process did not become ready:\n${output}`);
}, 60_000);

afterAll(async () => {
  if (child && exitCode === null) child.kill('SIGKILL');
  receiver?.server.close();
  await dropDatabase?.();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  it('spans arrive at the OTLP/HTTP receiver, flushed at shutdown; no variable value, inline argument, token or error message is in them', {
    timeout: 30_000,
  }, async () => {
    const variableSecret = `variable-${randomUUID()}`;
    const inlineSecret = `inline-${randomUUID()}`;
    const coercionSecret = `coercion-${randomUUID()}`;
    const created = await postGraphQL(
      `${base}/graphql`,
      {
        query: `mutation CreateProbe($title: String!) { createDocument(input: { organization: "acme", title: $title, body: "${inlineSecret}" }) { document { id } } }`,
        variables: { title: variableSecret },
      },
      { token },
    );
    expect(created.json.data.createDocument.document.id).toBeDefined();
    const coercion = await postGraphQL(
      `${base}/graphql`,
      {
        query: 'query CoercionProbe($first: Int) { documents(first: $first) { pageInfo { hasNextPage } } }',
        variables: { first: coercionSecret },
      },
      { token },
    );
    expect(coercion.json.errors[0].message).toContain(coercionSecret); // the client is told; the trace must not be
    const status = await postGraphQL(`${base}/graphql`, { query: '{ status { version } }' });
    expect(status.status).toBe(200);

    // Without METRICS_PORT there are no metrics: no listener, and /metrics is 404 on the main port.
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
    expect(output).not.toContain('metrics listener');

    // The batch exporter waits up to 5 s; shutting down must flush it.
    child.kill('SIGTERM');
    await new Promise((resolve) => (exitCode !== null ? resolve(null) : child.once('exit', resolve)));
    expect(exitCode).toBe(0);

    const traces = receiver.exports.filter((entry) => entry.path === '/v1/traces');
    expect(traces.length).toBeGreaterThan(0);
    for (const entry of traces) {
      expect(entry.headers['content-type']).toBe('application/json');
      expect(entry.headers['x-collector-key']).toBe(collectorKey); // OTEL_EXPORTER_OTLP_HEADERS is honoured
    }
    const spans = spansOf(traces);
    expect(spans.map(({ span }) => span.name).sort()).toEqual(['mutation.CreateProbe', 'query.CoercionProbe', 'query.anonymous']);
    for (const { resource, span } of spans) {
      expect(resource['service.name']).toBe('latchkey-under-test');
      const keys = (span.attributes ?? []).map(({ key }) => key);
      expect(keys).toEqual(expect.arrayContaining(['graphql.execute.operationName', 'graphql.execute.operationType']));
      for (const forbidden of ['graphql.execute.document', 'graphql.execute.variables', 'graphql.execute.result'])
        expect(keys).not.toContain(forbidden);
    }
    const failed = spans.find(({ span }) => span.name === 'query.CoercionProbe')!.span;
    expect(failed.events).toEqual([
      expect.objectContaining({
        name: 'exception',
        attributes: expect.arrayContaining([
          { key: 'graphql.error.codes', value: { arrayValue: { values: [{ stringValue: 'UNCODED' }] } } },
        ]),
      }),
    ]);
    const everything = receiver.exports.map((entry) => entry.body).join('\n');
    for (const secret of [variableSecret, inlineSecret, coercionSecret, token, 'alice@acme.test']) expect(everything).not.toContain(secret);
  });
});
