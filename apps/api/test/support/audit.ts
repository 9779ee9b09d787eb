import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createDatabase, listAuditEvents, type AuditEventRow, type Database } from '@latchkey/db';
import { CLI, run } from './built-cli.js';
import type { TestService } from './service.js';

/** Every audit row the service wrote, once its writer has written what was queued. */
export async function auditRows(service: TestService, db: Database = service.database.db): Promise<AuditEventRow[]> {
  await service.auditWriter.settled();
  return listAuditEvents(db, { afterSeq: -1, limit: 100_000 });
}

/** Rows of one type. */
export const ofType = (rows: AuditEventRow[], type: string) => rows.filter((row) => row.type === type);

/** The environment the CLI needs to act on a (closed) test service's database with its key. */
export function cliEnv(service: TestService): Record<string, string | undefined> {
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATA_DIR: service.config.dataDir,
    DATABASE_URL: service.config.database.url,
    SIGNING_KEY: JSON.stringify(service.privateJwk),
  };
}

/** `latchkey audit ...` as the built CLI, against the closed service's database. */
export const runAudit = (service: TestService, args: string[]) => run(CLI, ['audit', ...args], cliEnv(service), service.config.dataDir);

/** The closed service's database, opened for `change` (tampering) and closed again, so the embedded one is free for the CLI. */
export async function withClosedDatabase<T>(service: TestService, change: (db: Database) => Promise<T>): Promise<T> {
  const database = await createDatabase({ url: service.config.database.url, dataDir: service.config.dataDir, poolSize: 2 });
  try {
    return await change(database.db);
  } finally {
    await database.close();
  }
}

/** Writes `text` to a file in the service's data directory and answers its path. */
export function dataFile(service: TestService, name: string, text: string): string {
  const file = path.join(service.config.dataDir, name);
  writeFileSync(file, text);
  return file;
}
