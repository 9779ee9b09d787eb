import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createDatabase, documents, runMigrations, seedDemoData, users } from '@latchkey/db';
import { like } from 'drizzle-orm';
import { createOwnDatabase, seedPgliteDataDir, testTempDir } from '@latchkey/db/testing';
import { generateSigningJwk, mintAccessToken, parseSigningKey } from '@latchkey/auth/tokens';
import { freePort } from './browser-session.js';

// Real api processes (the built dist/src/main.js), as an operator runs them.
// (This file also runs compiled, from dist/test/support, for `pnpm chaos`.)
const MAIN = fileURLToPath(
  new URL(import.meta.url.includes('/dist/test/') ? '../../src/main.js' : '../../dist/src/main.js', import.meta.url),
);

export interface ServiceProcesses {
  /** each process's base URL */
  urls: string[];
  /** each process (send it a signal to see it shut down) */
  children: ChildProcess[];
  /** resolves when process `index` has exited: its exit code and how long after this call */
  exited(index: number): Promise<{ code: number | null; ms: number }>;
  /** the JSON log lines process `index` has written so far, at its LOG_LEVEL (a test waits for the one it needs) */
  logLines(index: number): Record<string, unknown>[];
  dataDir: string;
  publicUrl: string;
  /** an access token for a user id, valid on every process (they share the key) */
  token(userId: string, ttlSeconds?: number): Promise<string>;
  /** the id of the seeded user with this e-mail (read from the shared database) */
  userIdOf(email: string): Promise<string>;
  /** the database URL they share ('' on the embedded database) */
  databaseUrl: string;
  /** the titles of the documents in the shared database that start with `prefix-` (what a test's writers committed) */
  documentTitles(prefix: string): Promise<string[]>;
  stop(): Promise<void>;
}

/** Configuration added to one process, given the URL of the database they share ('' on the embedded one) and the process's index. */
export type ProcessEnv = Record<string, string> | ((databaseUrl: string, index: number, publicUrl: string) => Record<string, string>);

/**
 * `count` api processes that are one service: one PostgreSQL database of their own (migrated and seeded), one
 * signing key, one public URL and data directory. `env` adds configuration (REDIS_URL, TRUST_PROXY, say; or, as a function,
 * a DATABASE_URL through a proxy for some of them); a PUBLIC_URL in it (a proxy in front) replaces the default one.
 */
export async function startServiceProcesses(
  count: number,
  env: ProcessEnv = {},
  options: {
    /** PUBLIC_URL is the first process's own address (`http://localhost:<its port>`): browsers sign in there */
    publicUrlOnFirst?: boolean;
  } = {},
): Promise<ServiceProcesses> {
  const dataDir = testTempDir('processes');
  // One PostgreSQL database of their own; without DATABASE_URL a single process may run on the embedded one.
  if (!process.env['DATABASE_URL'] && count > 1) throw new Error('several processes share PostgreSQL: DATABASE_URL is needed');
  const own = process.env['DATABASE_URL'] ? await createOwnDatabase(process.env['DATABASE_URL']) : undefined;
  if (!own) seedPgliteDataDir(dataDir);
  const seeded = await createDatabase({ url: own?.url, dataDir, poolSize: 2 });
  await runMigrations(seeded);
  await seedDemoData(seeded);
  // Read now: once a process has it open, the embedded database serves no one else (DATABASE_IN_USE).
  const seededUsers = new Map((await seeded.db.select({ id: users.id, email: users.email }).from(users)).map((row) => [row.email, row.id]));
  await seeded.close();
  const privateJwk = await generateSigningJwk();
  const signingKey = await parseSigningKey(JSON.stringify(privateJwk));
  const ports: number[] = [];
  for (let i = 0; i < count; i++) ports.push(await freePort());
  const publicUrl =
    (typeof env === 'function' ? undefined : env['PUBLIC_URL']) ??
    `http://localhost:${options.publicUrlOnFirst ? ports[0] : await freePort()}`;
  const children: ChildProcess[] = [];
  const outputs: string[][] = [];
  const logLines: Record<string, unknown>[][] = [];
  const exits: Promise<number | null>[] = [];
  const urls: string[] = [];
  for (let i = 0; i < count; i++) {
    const port = ports[i]!;
    children.push(
      spawn(process.execPath, [MAIN], {
        env: {
          PATH: process.env['PATH'],
          NODE_ENV: 'test',
          PORT: String(port),
          HOST: '127.0.0.1',
          PUBLIC_URL: publicUrl,
          DATA_DIR: dataDir,
          ...(own ? { DATABASE_URL: own.url } : {}),
          SIGNING_KEY: JSON.stringify(privateJwk),
          LOG_LEVEL: 'warn',
          API_BUDGET_FILE: process.env['API_BUDGET_FILE'],
          ...(typeof env === 'function' ? env(own?.url ?? '', i, publicUrl) : env),
        },
        stdio: process.env['TEST_PROCESS_LOGS'] ? 'inherit' : ['ignore', 'pipe', 'pipe'],
      }),
    );
    const child = children.at(-1)!;
    // The end of what the process wrote, for the error when it does not come up (a port taken meanwhile, say).
    const written: string[] = [];
    outputs.push(written);
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8').on('data', (chunk: string) => {
        written.push(chunk);
        while (written.join('').length > 4096) written.shift();
      });
    }
    // Every whole line of its stdout that is JSON: its log.
    const lines: Record<string, unknown>[] = [];
    logLines.push(lines);
    let partial = '';
    child.stdout?.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        try {
          lines.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // not a log line
        }
      }
    });
    exits.push(new Promise((resolve) => child.once('exit', (code) => resolve(code))));
    urls.push(`http://127.0.0.1:${port}`);
  }
  for (const [index, base] of urls.entries()) {
    for (let i = 0; ; i++) {
      if ((await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200) break;
      if (i >= 150 || children[index]!.exitCode !== null) {
        const exit = children[index]!.exitCode === null ? 'still running' : `exit code ${children[index]!.exitCode}`;
        // The caller gets no handle to stop them with: stop every process started here, or they outlive the run.
        for (const started of children) started.kill('SIGKILL');
        throw new Error(`api process ${index} did not become ready (${exit}); its last output:\n${outputs[index]!.join('')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  return {
    urls,
    children,
    async exited(index) {
      const from = performance.now();
      const code = await exits[index]!;
      return { code, ms: performance.now() - from };
    },
    logLines: (index) => logLines[index]!,
    dataDir,
    publicUrl,
    databaseUrl: own?.url ?? '',
    async userIdOf(email) {
      const id = seededUsers.get(email);
      if (!id) throw new Error(`no seeded user ${email}`);
      return id;
    },
    async documentTitles(prefix) {
      const database = await createDatabase({ url: own?.url, dataDir, poolSize: 2 });
      try {
        const rows = await database.db
          .select({ title: documents.title })
          .from(documents)
          .where(like(documents.title, `${prefix}-%`));
        return rows.map((row) => row.title);
      } finally {
        await database.close();
      }
    },
    token: (subject, ttlSeconds = 600) =>
      mintAccessToken(signingKey, { subject, issuer: publicUrl, audience: publicUrl, ttlSeconds, amr: ['otp'] }),
    async stop() {
      for (const child of children) child.kill('SIGTERM');
      await Promise.all(
        children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))),
      );
      await own?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
