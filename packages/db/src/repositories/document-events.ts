import { sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { rowsOf } from '../rows.js';
import { documentEvents, documentEventsPurged } from '../schema/index.js';

/**
 * Adds an event to the outbox, inside the change's transaction `tx` and after its write. With `notify`, the
 * same statement also sends `pg_notify(notify, seq)` (PostgreSQL delivers it at commit).
 */
export async function insertDocumentEvent(tx: Database, event: object, notify: string | null): Promise<void> {
  if (notify !== null) {
    await tx.execute(sql`with added as (insert into ${documentEvents} (event) values (${JSON.stringify(event)}::jsonb) returning seq)
          select pg_notify(${notify}, seq::text) from added`);
  } else {
    await tx.insert(documentEvents).values({ event: { ...(event as Record<string, unknown>) } });
  }
}

/** The sequence number after the newest event and after the purge watermark: where a new reader starts. */
export async function nextDocumentEventSeq(db: Database): Promise<number> {
  const [start] = rowsOf<{ next: string }>(
    await db.execute(sql`select greatest(
        coalesce((select max(seq) from ${documentEvents}), 0),
        coalesce((select through_seq from ${documentEventsPurged} where id = 1), 0)) + 1 as next`),
  );
  return Number(start!.next);
}

/**
 * One row of a batch read: the snapshot's xmin and xmax, the purge watermark and the database's clock on every
 * row, and one event (seq, the event with its `id` and `at`, its insert time), or no event when none is there.
 * Numbers are text (exact: bigints and microseconds).
 */
export interface DocumentEventBatchRow {
  xmin: string;
  xmax: string;
  purged: string;
  now_ms: string;
  seq: string | null;
  event: string | null;
  created_ms: string | null;
}

/**
 * Up to `limit` events from sequence number `from` on, in order, in one statement: the rows, the watermark and
 * the snapshot's xmin/xmax are then of one snapshot. Always at least one row (with null `seq` when no event).
 */
export async function readDocumentEventBatch(db: Database, from: number, limit: number): Promise<DocumentEventBatchRow[]> {
  return rowsOf<DocumentEventBatchRow>(
    await db.execute(sql`select
          pg_snapshot_xmin(s.snapshot)::text as xmin,
          pg_snapshot_xmax(s.snapshot)::text as xmax,
          coalesce((select through_seq from ${documentEventsPurged} where id = 1), 0)::text as purged,
          (extract(epoch from clock_timestamp()) * 1000)::text as now_ms,
          e.seq::text as seq,
          (e.event || jsonb_build_object('id', e.seq::text, 'at', floor(extract(epoch from e.created_at) * 1000)::bigint))::text as event,
          (extract(epoch from e.created_at) * 1000)::text as created_ms
        from (select pg_current_snapshot() as snapshot) s
        left join lateral (
          select seq, event, created_at from ${documentEvents} where seq >= ${from} order by seq limit ${limit}
        ) e on true
        order by e.seq`),
  );
}

/**
 * Deletes the oldest events up to the first one still within the retention (a prefix in sequence order, found
 * along the primary key) and raises the watermark to the last of them, in one statement; two instances purging
 * at once delete disjoint rows and the watermark only rises.
 */
export async function purgeDocumentEvents(db: Database, retentionSeconds: number): Promise<void> {
  await db.execute(sql`with gone as (
        delete from ${documentEvents} where seq < coalesce(
          (select seq from ${documentEvents} where created_at >= clock_timestamp() - make_interval(secs => ${retentionSeconds}) order by seq limit 1),
          9223372036854775807)
        returning seq)
      insert into ${documentEventsPurged} (id, through_seq) select 1, max(seq) from gone having count(*) > 0
      on conflict (id) do update set through_seq = greatest(${documentEventsPurged.throughSeq}, excluded.through_seq)`);
}
