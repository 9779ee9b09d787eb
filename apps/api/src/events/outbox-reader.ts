import {
  nextDocumentEventSeq,
  purgeDocumentEvents,
  readDocumentEventBatch,
  type DatabaseHandle,
  type DocumentEventBatchRow,
} from '@latchkey/db';
import type { Logger } from 'pino';
import { parseDocumentEvent, type DocumentEvent, type EventSource } from './types.js';

export interface OutboxReaderOptions {
  database: DatabaseHandle;
  /** wake-ups (NOTIFY, Redis, or none): each one triggers a read */
  wake: { onWake(listener: () => void): () => void };
  /** outbox rows older than this are purged (EVENT_RETENTION), in seconds */
  retentionSeconds: number;
  /** a read when no wake-up comes, since wake-ups can be lost. @default 1000 */
  pollIntervalMs?: number;
  /** rows read by one statement. @default 500 */
  batchSize?: number;
  /** how often this instance purges old rows. @default a quarter of the retention, between 250 ms and 60 s */
  purgeIntervalMs?: number;
  logger: Logger;
  /** told, for every event handed to the subscribers, how long after its row was written that was (ms) */
  onDelivered?: (lagMs: number) => void;
}

export interface OutboxReader extends EventSource {
  /** reads now (this instance's own commits call it; a read under way reads again when done) */
  wake(): void;
  /** the next sequence number this reader will deliver (tests, diagnostics) */
  position(): number;
  /**
   * How many reads of the outbox have finished, answered or failed (tests, diagnostics). A read finished after
   * one that was under way at some moment started after that moment: a test that needs the reader to have looked
   * since then waits for this to grow by two, instead of for a time.
   */
  reads(): number;
  close(): Promise<void>;
}

/** A run of missing sequence numbers below `below`, first seen in a snapshot whose xmax was `xmax`. */
interface Gap {
  below: number;
  xmax: bigint;
}

const FIRST_RETRY_MS = 20;
const MAX_RETRY_MS = 1000;

type BatchOutcome = 'caught-up' | 'more' | 'waiting';

/** Where reading stands: the next sequence number to deliver, and the gap below it being waited for. */
interface ReadPosition {
  next: number;
  gap: Gap | undefined;
}

interface Listener {
  event: (event: DocumentEvent) => void;
  interrupted: () => void;
}

/** What taking one batch needs from its reader: where the events (and the news of lost ones) go. */
interface BatchHandlers {
  logger: Logger;
  batchSize: number;
  listeners: Set<Listener>;
  onDelivered: OutboxReaderOptions['onDelivered'];
}

/**
 * One batch's rows, just read: events delivered in sequence order, gaps bridged or waited for, and the position
 * moved past what was taken.
 */
function takeBatch(rows: DocumentEventBatchRow[], position: ReadPosition, handlers: BatchHandlers): BatchOutcome {
  const readAt = Date.now();
  const head = rows[0]!;
  const xmin = BigInt(head.xmin);
  const purged = Number(head.purged);
  if (purged >= position.next) {
    handlers.logger.warn(
      { from: position.next, through: purged },
      'event outbox: events were purged before this instance read them; its subscriptions are interrupted',
    );
    position.next = purged + 1;
    position.gap = undefined;
    for (const listener of [...handlers.listeners]) listener.interrupted();
  }
  const dbNow = Number(head.now_ms);
  let waiting = false;
  for (const row of rows) {
    if (row.seq === null) break;
    const seq = Number(row.seq);
    if (seq < position.next) continue;
    while (seq > position.next) {
      // The numbers missing below `seq` were drawn before it, by transactions that had their ids by then.
      if (!position.gap || position.gap.below <= position.next) position.gap = { below: seq, xmax: BigInt(head.xmax) };
      if (xmin < position.gap.xmax) {
        waiting = true;
        break;
      }
      // Every transaction that could have held these numbers has ended, and they are not here: rolled back.
      position.next = Math.min(seq, position.gap.below);
    }
    if (waiting) break;
    position.next = seq + 1;
    const event = parseDocumentEvent(row.event!);
    if (!event) {
      handlers.logger.warn({ seq }, 'event outbox: ignored a malformed row');
      continue;
    }
    const lagMs = dbNow - Number(row.created_ms) + (Date.now() - readAt);
    for (const listener of [...handlers.listeners]) listener.event(event);
    handlers.onDelivered?.(lagMs);
  }
  if (position.gap && position.gap.below <= position.next) position.gap = undefined;
  if (waiting) return 'waiting';
  return rows.length === handlers.batchSize && rows[0]!.seq !== null ? 'more' : 'caught-up';
}

/** Purges old outbox rows every `purgeIntervalMs`; the timer does not hold the process open. */
function startPurging(
  db: DatabaseHandle['background'],
  { retentionSeconds, purgeIntervalMs }: Pick<OutboxReaderOptions, 'retentionSeconds' | 'purgeIntervalMs'>,
  logger: Logger,
): NodeJS.Timeout {
  const retentionMs = retentionSeconds * 1000;
  const intervalMs = purgeIntervalMs ?? Math.min(60_000, Math.max(250, retentionMs / 4));
  // The oldest rows up to the first one still within the retention, and the watermark raised, in one statement.
  const purge = () => purgeDocumentEvents(db, retentionSeconds);
  let purgeFailing = false;
  const purgeTimer = setInterval(() => {
    // A missed purge is done by the next one; one log line per streak of failures.
    purge().then(
      () => (purgeFailing = false),
      (error: unknown) => {
        if (!purgeFailing) logger.warn({ err: error }, 'event outbox: purging old events failed; trying again later');
        purgeFailing = true;
      },
    );
  }, intervalMs);
  purgeTimer.unref();
  return purgeTimer;
}

/**
 * This instance's reader of the event outbox: it starts after the newest row (no replay) and hands every
 * committed event to its listeners once, in sequence order, reading after the last sequence number it delivered
 * on every wake-up and every `pollIntervalMs`.
 *
 * Sequence numbers are drawn at insert but become visible at commit, so a missing number may still be coming.
 * A gap is skipped only once every transaction that was running when it was first seen has ended (the xmin of a
 * later snapshot reached that snapshot's xmax) and the number is still absent: it was rolled back. A gap at or
 * below the purge watermark cannot be bridged (the rows may have been purged before this reader saw them): the
 * listeners are told (`onInterrupted`) and reading goes on after the watermark. A failed read is tried again
 * (backing off to 1 s, one log line per outage) from the same position, so nothing is skipped when the
 * database comes back.
 */
export async function startOutboxReader(options: OutboxReaderOptions): Promise<OutboxReader> {
  const { database, logger } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const batchSize = options.batchSize ?? 500;
  const listeners = new Set<Listener>();
  // Work of the process, not of a request (even when a request's commit woke it): each statement its own
  // deadline, none counted as a request's statement.
  const db = database.background;

  const position: ReadPosition = { next: await nextDocumentEventSeq(db), gap: undefined };
  let gapRetryMs = FIRST_RETRY_MS;
  let failureRetryMs = FIRST_RETRY_MS;
  let failing = false;
  let reading: Promise<void> | undefined;
  let again = false;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let reads = 0;

  const batch: BatchHandlers = { logger, batchSize, listeners, onDelivered: options.onDelivered };

  /** One statement, so the rows, the watermark and the snapshot's xmin/xmax are of one snapshot. */
  async function readBatch(): Promise<BatchOutcome> {
    const rows = await readDocumentEventBatch(db, position.next, batchSize).finally(() => reads++);
    return takeBatch(rows, position, batch);
  }

  async function readUntilCaughtUp(): Promise<void> {
    let delay = pollIntervalMs;
    try {
      for (;;) {
        again = false;
        const outcome = await readBatch();
        if (failing) {
          failing = false;
          logger.info({ position: position.next }, 'event outbox: reading again');
        }
        failureRetryMs = FIRST_RETRY_MS;
        if (outcome === 'waiting') {
          // Nothing announces a rollback: look again soon, then less often.
          delay = gapRetryMs;
          gapRetryMs = Math.min(gapRetryMs * 2, pollIntervalMs);
        } else {
          gapRetryMs = FIRST_RETRY_MS;
        }
        if (closed || (outcome !== 'more' && !again)) break;
      }
    } catch (error) {
      if (!failing) {
        failing = true;
        logger.warn({ err: error, position: position.next }, 'event outbox: reading failed; retrying until the database answers');
      }
      // Wake-ups during an outage do not shorten the back-off.
      again = false;
      delay = failureRetryMs;
      failureRetryMs = Math.min(failureRetryMs * 2, MAX_RETRY_MS);
    }
    if (!closed) timer = setTimeout(read, delay).unref();
  }

  function read(): void {
    if (closed) return;
    if (reading) {
      again = true;
      return;
    }
    clearTimeout(timer);
    reading = readUntilCaughtUp().finally(() => {
      reading = undefined;
      // A wake-up that came as the last read finished.
      if (again && !failing) read();
    });
  }

  const purgeTimer = startPurging(db, options, logger);

  const stopWaking = options.wake.onWake(read);
  timer = setTimeout(read, pollIntervalMs).unref();

  return {
    subscribe(event, interrupted) {
      const listener = { event, interrupted };
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    wake: read,
    position: () => position.next,
    reads: () => reads,
    async close() {
      closed = true;
      stopWaking();
      clearTimeout(timer);
      clearInterval(purgeTimer);
      await reading;
    },
  };
}
