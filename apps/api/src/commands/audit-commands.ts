// `pnpm latchkey audit verify [--checkpoint FILE]` and `audit export --since <ISO time | duration>` (docs/audit.md).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  checkpointAuditHead,
  deriveAuditKey,
  findCheckpointJws,
  readCheckpoint,
  verifyAuditChain,
  type AuditFinding,
  type KeyMaterial,
} from '@latchkey/auth';
import { loadKeyMaterial } from '@latchkey/auth/tokens';
import { listAuditEvents, runMigrations } from '@latchkey/db';
import { parseDurationSeconds, type Config } from '../config/load.js';
import { withDatabase } from './database-commands.js';
import { UsageError } from './usage.js';

const EXPORT_PAGE = 1000;

function keysOf(config: Config): Promise<KeyMaterial> {
  return loadKeyMaterial({
    signingKey: config.keys.signingKey,
    verifyKeys: config.keys.verifyKeys,
    dataDir: config.dataDir,
    production: config.env === 'production',
  });
}

/** `--since`: an ISO 8601 time, or a duration back from now (`24h`, `7d`, `90m`). */
export function parseSince(value: string | undefined, now = Date.now()): Date {
  if (value === undefined)
    throw new UsageError('audit export: --since is required (an ISO time such as 2026-01-31T00:00:00Z, or a duration such as 24h)');
  if (/^\d{4}-\d{2}-\d{2}/.test(value)) {
    const time = Date.parse(value);
    if (Number.isNaN(time)) throw new UsageError(`audit export: --since ${JSON.stringify(value)} is not a valid ISO time`);
    return new Date(time);
  }
  let seconds: number;
  try {
    seconds = parseDurationSeconds(value);
  } catch {
    throw new UsageError(
      `audit export: --since ${JSON.stringify(value)} is neither an ISO time (2026-01-31T00:00:00Z) nor a duration (24h, 7d)`,
    );
  }
  return new Date(now - seconds * 1000);
}

function describe(finding: AuditFinding): string {
  switch (finding.kind) {
    case 'edited':
      return `row ${finding.seq} was edited (its content no longer matches its MAC)`;
    case 'deleted':
      return `row ${finding.seq} was deleted`;
    case 'inserted':
      return `row ${finding.seq} was inserted (it was not written by this trail)`;
    case 'truncated':
      return `the chain ends at row ${finding.seq}, before the checkpoint's row ${finding.checkpointSeq}: its tail was cut off`;
    case 'anchor':
      return `the retention anchor at row ${finding.seq} is not a checkpoint signed with this server's key`;
  }
}

export async function auditCommand(config: Config, args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'verify') return verify(config, rest);
  if (action === 'export') return exportEvents(config, rest);
  throw new UsageError('audit: use "audit verify [--checkpoint FILE]" or "audit export --since <ISO time | 24h>"');
}

async function verify(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { checkpoint: { type: 'string' } }, strict: true });
  const keys = await keysOf(config);
  let checkpoint: { seq: number; mac: string } | undefined;
  if (values.checkpoint !== undefined) {
    let text: string;
    try {
      text = readFileSync(values.checkpoint, 'utf8');
    } catch {
      throw new UsageError(`audit verify: cannot read ${values.checkpoint}`);
    }
    const jws = findCheckpointJws(text);
    checkpoint = jws === undefined ? undefined : await readCheckpoint(jws, keys.jwks);
    if (!checkpoint) throw new UsageError(`audit verify: ${values.checkpoint} holds no checkpoint signed with this server's keys`);
  }
  const result = await withDatabase(config, async (database) => {
    await runMigrations(database);
    return verifyAuditChain(database.db, { key: deriveAuditKey(keys.signing.key), jwks: keys.jwks, checkpoint });
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  if (result.ok) {
    process.stderr.write(`audit trail intact: ${result.rows} rows after row ${result.from}, head ${result.head.seq}\n`);
  } else {
    process.stderr.write(`audit trail tampered with: ${describe(result.finding)}\n`);
    process.exitCode = 1;
  }
}

async function exportEvents(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { since: { type: 'string' } }, strict: true });
  const since = parseSince(values.since);
  const keys = await keysOf(config);
  await withDatabase(config, async (database) => {
    await runMigrations(database);
    // The head first: every row exported is covered by the checkpoint printed at the end.
    const head = await checkpointAuditHead(database.db, keys.signing);
    if (!head) return printCheckpoint(head);
    let afterSeq = -1;
    for (;;) {
      const page = await listAuditEvents(database.db, { afterSeq, since, limit: EXPORT_PAGE });
      for (const row of page) {
        if (row.seq > head.seq) return printCheckpoint(head);
        const { seq, time, type, actor, subject, address, userAgent, requestId, details, mac } = row;
        process.stdout.write(
          `${JSON.stringify({ seq, time: time.toISOString(), type, actor, subject, address, userAgent, requestId, details, mac })}\n`,
        );
      }
      if (page.length < EXPORT_PAGE) break;
      afterSeq = page[page.length - 1]!.seq;
    }
    printCheckpoint(head);
  });
}

/** The head's checkpoint on stderr (stdout holds only events): save the JWS for `audit verify --checkpoint FILE`. */
function printCheckpoint(head: { seq: number; checkpoint: string } | undefined): void {
  if (head) process.stderr.write(`audit checkpoint (row ${head.seq}): ${head.checkpoint}\n`);
  else process.stderr.write('the audit trail is empty: no checkpoint\n');
}
