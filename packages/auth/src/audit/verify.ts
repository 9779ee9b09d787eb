import { latestAuditAnchor, listAuditEvents, type AuditEventRow, type Database } from '@latchkey/db';
import type { JSONWebKeySet } from 'jose';
import { GENESIS, macMatches } from './chain.js';
import { readCheckpoint, type AuditCheckpoint } from './checkpoint.js';

/**
 * The first thing wrong with the chain:
 * - `edited`: the row's content (or MAC) changed; the next row still chains to its stored MAC, or it is the last one
 * - `deleted`: the row with this `seq` is missing (a gap, or the beginning with no anchor for it)
 * - `inserted`: a row that was not written here; the rows after it were renumbered (each is the original row one
 *   place earlier), or it lies after a checkpoint's head
 * - `truncated`: the chain ends at `seq`, before the checkpoint's head (`checkpointSeq`): its tail was cut off
 * - `anchor`: the retention anchor is not a checkpoint signed with this server's key, or does not match it
 */
export type AuditFinding =
  | { kind: 'edited' | 'deleted' | 'inserted' | 'anchor'; seq: number }
  | { kind: 'truncated'; seq: number; checkpointSeq: number };

export type AuditVerification =
  | { ok: true; rows: number; from: number; head: AuditCheckpoint }
  | { ok: false; rows: number; from: number; finding: AuditFinding };

export interface VerifyOptions {
  /** the chain's HMAC key */
  key: Buffer;
  /** the public keys checkpoints and anchors are verified with */
  jwks: JSONWebKeySet;
  /** a checkpoint the chain must still reach (`audit verify --checkpoint FILE`) */
  checkpoint?: AuditCheckpoint;
}

const PAGE = 1000;

/** Rows in chain order, one page at a time. */
async function* rowsOf(db: Database): AsyncGenerator<AuditEventRow> {
  let afterSeq = -1;
  for (;;) {
    const page = await listAuditEvents(db, { afterSeq, limit: PAGE });
    yield* page;
    if (page.length < PAGE) return;
    afterSeq = page[page.length - 1]!.seq;
  }
}

/** Verifies the whole chain, from the newest retention anchor (or its beginning), against `checkpoint` if given. */
export async function verifyAuditChain(db: Database, options: VerifyOptions): Promise<AuditVerification> {
  const { key, checkpoint } = options;
  const anchor = await latestAuditAnchor(db);
  let previous: AuditCheckpoint = GENESIS;
  if (anchor) {
    const signed = await readCheckpoint(anchor.checkpoint, options.jwks);
    if (!signed || signed.seq !== anchor.seq || signed.mac !== anchor.mac)
      return { ok: false, rows: 0, from: anchor.seq, finding: { kind: 'anchor', seq: anchor.seq } };
    previous = { seq: anchor.seq, mac: anchor.mac };
  }
  const from = previous.seq;
  let rows = 0;
  const failed = (finding: AuditFinding): AuditVerification => ({ ok: false, rows, from, finding });
  const iterator = rowsOf(db);
  let next = (await iterator.next()).value as AuditEventRow | undefined;
  while (next) {
    const row = next;
    next = (await iterator.next()).value as AuditEventRow | undefined;
    if (row.seq <= from) return failed({ kind: 'inserted', seq: row.seq });
    if (row.seq > previous.seq + 1) return failed({ kind: 'deleted', seq: previous.seq + 1 });
    if (!macMatches(key, row, previous.mac)) {
      // The rows after an insertion were renumbered: the next one verifies as the original of this place.
      if (next && macMatches(key, { ...next, seq: next.seq - 1 }, previous.mac)) return failed({ kind: 'inserted', seq: row.seq });
      const afterCheckpoint = !next && checkpoint !== undefined && row.seq > checkpoint.seq;
      return failed({ kind: afterCheckpoint ? 'inserted' : 'edited', seq: row.seq });
    }
    if (checkpoint && row.seq === checkpoint.seq && row.mac !== checkpoint.mac) return failed({ kind: 'edited', seq: row.seq });
    previous = { seq: row.seq, mac: row.mac };
    rows += 1;
  }
  if (checkpoint && checkpoint.seq > previous.seq) return failed({ kind: 'truncated', seq: previous.seq, checkpointSeq: checkpoint.seq });
  return { ok: true, rows, from, head: previous };
}
