import {
  createAuditWriter,
  checkpointAuditHead,
  deriveAuditKey,
  purgeAuditTrail,
  type AuditWriter,
  type KeyMaterial,
} from '@latchkey/auth';
import type { DatabaseHandle } from '@latchkey/db';
import type { Logger } from 'pino';
import type { ServiceMetrics } from './metrics.js';

/** How often the chain's head is signed and logged (when it moved). */
const CHECKPOINT_EVERY_MS = 60_000;
/** How often retention (AUDIT_RETENTION) runs. */
const PURGE_EVERY_MS = 10 * 60_000;

export interface AuditServiceOptions {
  database: DatabaseHandle;
  keys: KeyMaterial;
  /** AUDIT_RETENTION, in seconds */
  retentionSeconds: number;
  logger: Logger;
  metrics: ServiceMetrics | undefined;
}

/**
 * The process's audit writer (the trail's background side): rows are chained and written through the background
 * database (a deadline per statement, and never counted as a request's statements); every minute the head's signed
 * checkpoint is logged when it moved; every ten minutes retention purges behind an anchor. `close` writes what is
 * queued and logs a last checkpoint.
 */
export function startAuditService({ database, keys, retentionSeconds, logger, metrics }: AuditServiceOptions) {
  const db = database.background;
  const writer: AuditWriter = createAuditWriter({
    db,
    key: deriveAuditKey(keys.signing.key),
    log: logger,
    onDropped: metrics?.auditDropped,
  });
  let lastLogged = -1;
  async function checkpoint(): Promise<void> {
    const head = await checkpointAuditHead(db, keys.signing);
    if (!head || head.seq === lastLogged) return;
    lastLogged = head.seq;
    logger.info({ auditCheckpoint: head.checkpoint, seq: head.seq }, 'audit checkpoint');
  }
  async function purge(): Promise<void> {
    const { purged, anchor } = await purgeAuditTrail(db, { signing: keys.signing, before: new Date(Date.now() - retentionSeconds * 1000) });
    if (anchor) logger.info({ auditCheckpoint: anchor.checkpoint, seq: anchor.seq, purged }, 'audit retention: purged behind an anchor');
  }
  const failed = (what: string) => (error: unknown) =>
    logger.warn({ reason: error instanceof Error ? error.message : String(error) }, what);
  const timers = [
    setInterval(() => void checkpoint().catch(failed('audit checkpoint failed')), CHECKPOINT_EVERY_MS),
    setInterval(() => void purge().catch(failed('audit retention failed')), PURGE_EVERY_MS),
  ];
  for (const timer of timers) timer.unref();
  return {
    writer,
    async close(): Promise<void> {
      for (const timer of timers) clearInterval(timer);
      await writer.close();
      await checkpoint().catch(failed('audit checkpoint failed'));
    },
  };
}
