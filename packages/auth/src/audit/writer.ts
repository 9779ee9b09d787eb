import { auditChainHead, insertAuditEvents, lockAuditChain, type Database } from '@latchkey/db';
import { GENESIS, macOf } from './chain.js';
import type { PendingAuditRow } from './events.js';

export interface AuditWriterOptions {
  /** the database for the process's own work (`DatabaseHandle.background`: a deadline per statement) */
  db: Database;
  /** the chain's HMAC key (`deriveAuditKey`) */
  key: Buffer;
  /** events waiting to be written; one more is dropped @default 10000 */
  queueSize?: number;
  /** events lost (queue full, database not answering): counted as they go (the metrics) */
  onDropped?: (count: number) => void;
  log: { warn(fields: Record<string, unknown>, message: string): void };
  /** how soon a lost write is tried again (the `audit.dropped` event) @default 1000 */
  retryMs?: number;
}

const BATCH_SIZE = 200;

/**
 * The audit trail's background writer: rows join a bounded queue (`enqueue` returns at once, always) and are
 * written in batches, each in one transaction under the chain's advisory lock, so every instance appends to one
 * chain. A batch the database refuses or does not answer is lost, counted, and told by one `audit.dropped` row
 * (with the count) in the first write that succeeds afterwards, tried again every `retryMs` until it does.
 */
export function createAuditWriter(options: AuditWriterOptions) {
  const { db, key, log } = options;
  const queueSize = options.queueSize ?? 10_000;
  const retryMs = options.retryMs ?? 1000;
  const queue: PendingAuditRow[] = [];
  /** lost and not yet recorded as `audit.dropped` */
  let lost = 0;
  let draining: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;

  function drop(count: number): void {
    lost += count;
    options.onDropped?.(count);
    if (!retry && !closed) {
      retry = setTimeout(() => {
        retry = undefined;
        start();
      }, retryMs);
      retry.unref();
    }
  }

  async function write(rows: PendingAuditRow[]): Promise<void> {
    await db.transaction(async (tx) => {
      await lockAuditChain(tx);
      let head = (await auditChainHead(tx)) ?? GENESIS;
      const chained = rows.map((row) => {
        const seq = head.seq + 1;
        head = { seq, mac: macOf(key, { ...row, seq }, head.mac) };
        return { ...row, seq, mac: head.mac };
      });
      await insertAuditEvents(tx, chained);
    });
  }

  async function drain(): Promise<void> {
    // A burst recorded in one turn goes out as one batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (queue.length > 0 || lost > 0) {
      const batch = queue.splice(0, BATCH_SIZE);
      const told = lost;
      const rows: PendingAuditRow[] = told > 0 ? [droppedRow(told), ...batch] : batch;
      try {
        await write(rows);
        lost -= told;
      } catch (error) {
        log.warn(
          { reason: error instanceof Error ? error.message : String(error), lost: batch.length },
          'audit events could not be written',
        );
        drop(batch.length);
        return;
      }
    }
  }

  function start(): void {
    if (draining || closed) return;
    draining = drain().finally(() => {
      draining = undefined;
      if (queue.length > 0 && !retry) start();
    });
  }

  return {
    /** Queues a row; never waits, never throws. A full queue (or a closed writer) drops it, counted. */
    enqueue(row: PendingAuditRow): void {
      if (closed || queue.length >= queueSize) return drop(1);
      queue.push(row);
      start();
    },
    /** Resolves once every queued row has been written or dropped (tests, the CLI, shutdown). */
    async settled(): Promise<void> {
      while (draining) await draining;
    },
    /** Writes what is queued (within the shutdown's budget, by the caller), then takes nothing more. */
    async close(): Promise<void> {
      if (retry) clearTimeout(retry);
      retry = undefined;
      start();
      while (draining) await draining;
      closed = true;
    },
  };
}

export type AuditWriter = ReturnType<typeof createAuditWriter>;

function droppedRow(count: number): PendingAuditRow {
  return {
    time: new Date(),
    type: 'audit.dropped',
    actor: null,
    subject: null,
    address: null,
    userAgent: null,
    requestId: null,
    details: { count },
  };
}
