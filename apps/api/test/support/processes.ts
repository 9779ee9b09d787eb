import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase, runMigrations, seedDemoData, users } from '@latchkey/db';
import { eq } from 'drizzle-orm';
import { createOwnDatabase } from '@latchkey/db/testing';
import { generateSigningJwk } from '../../src/keys/key-material.js';
import { mintAccessToken } from '../../src/principal/mint-access-token.js';
import { parseSigningKey } from '../../src/keys/key-material.js';
import { freePort } from './browser-session.js';

// Real api processes (the built dist/src/main.js), as an operator runs them.
const MAIN = fileURLToPath(new URL('../../dist/src/main.js', import.meta.url));

export interface ServiceProcesses {
  /** each process's base URL */
  urls: string[];
  dataDir: string;
  publicUrl: string;
  /** an access token for a user id, valid on every process (they share the key) */
  token(userId: string, ttlSeconds?: number): Promise<string>;
  /** the database URL they share */
  databaseUrl: string;
  /** the id of a seeded user, by e-mail */
  userIdOf(email: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * `count` api processes that are one service: one PostgreSQL database of their own (migrated and seeded), one
 * signing key, one public URL and data directory. `env` adds configuration (REDIS_URL, TRUST_PROXY, say); a
 * PUBLIC_URL in it (a proxy in front) replaces the default one.
 */
export async function startServiceProcesses(count: number, env: Record<string, string> = {}): Promise<ServiceProcesses> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'latchkey-processes-'));
  const own = await createOwnDatabase(process.env['DATABASE_URL']!);
  const seeded = await createDatabase({ url: own.url, dataDir, poolSize: 2 });
  await runMigrations(seeded);
  await seedDemoData(seeded);
  await seeded.close();
  const privateJwk = await generateSigningJwk();
  const signingKey = await parseSigningKey(JSON.stringify(privateJwk));
  const publicUrl = env['PUBLIC_URL'] ?? `http://localhost:${await freePort()}`;
  const children: ChildProcess[] = [];
  const urls: string[] = [];
  for (let i = 0; i < count; i++) {
    const port = await freePort();
    children.push(
      spawn(process.execPath, [MAIN], {
        env: { PATH: process.env['PATH'], NODE_ENV: 'test', PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: publicUrl, DATA_DIR: dataDir, DATABASE_URL: own.url, SIGNING_KEY: JSON.stringify(privateJwk), LOG_LEVEL: 'warn', ...env },
        stdio: 'ignore',
      }),
    );
    urls.push(`http://127.0.0.1:${port}`);
  }
  for (const base of urls) {
    for (let i = 0; i < 150; i++) {
      if ((await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  return {
    urls,
    dataDir,
    publicUrl,
    databaseUrl: own.url,
    async userIdOf(email) {
      const database = await createDatabase({ url: own.url, dataDir, poolSize: 2 });
      try {
        return (await database.db.select({ id: users.id }).from(users).where(eq(users.email, email)))[0]!.id;
      } finally {
        await database.close();
      }
    },
    token: (subject, ttlSeconds = 600) => mintAccessToken(signingKey, { subject, issuer: publicUrl, audience: 'urn:latchkey:api', ttlSeconds, amr: ['otp'] }),
    async stop() {
      for (const child of children) child.kill('SIGTERM');
      await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
      await own.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
