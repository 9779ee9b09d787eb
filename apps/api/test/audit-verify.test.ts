import { createPublicKey } from 'node:crypto';
import { checkpointAuditHead, readCheckpoint } from '@latchkey/auth';
import { exportJWK } from 'jose';
import { auditAnchors, auditEvents, gte, insertAuditEvents, lte, sql, type AuditEventRow } from '@latchkey/db';
import { purgeAuditTrail } from '@latchkey/auth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows, dataFile, runAudit, withClosedDatabase } from './support/audit.js';
import { startTestService, type TestService } from './support/service.js';

// docs/audit.md: the chain, checkpoints, `audit verify`, `audit export` and retention, on the built CLI against
// the database a real service wrote (closed first: the embedded database serves one process at a time).

let service: TestService;
let original: AuditEventRow[];
let checkpointFile: string;

beforeAll(async () => {
  service = await startTestService();
  for (let index = 1; index <= 6; index += 1) {
    service.app.audit.record({
      type: 'session.ended',
      details: { sessionId: `session-${index}`, reason: 'signed-out' },
      subject: `user-${index}`,
    });
    await service.auditWriter.settled();
    await new Promise((resolve) => setTimeout(resolve, 5)); // distinct times, for retention below
  }
  original = await auditRows(service);
  const head = await checkpointAuditHead(service.database.db, service.signingKey);
  checkpointFile = dataFile(service, 'checkpoint.jws', `${head!.checkpoint}\n`);
  await service.close();
}, 60_000);
afterAll(() => service?.stop());

/** Puts the chain back as it was written. */
const restore = () =>
  withClosedDatabase(service, async (db) => {
    await db.delete(auditEvents);
    await insertAuditEvents(db, original);
  });

const verify = async (...args: string[]) => {
  const result = await runAudit(service, ['verify', ...args]);
  return {
    ...result,
    report: JSON.parse(result.stdout || 'null') as { ok: boolean; finding?: { kind: string; seq: number; checkpointSeq?: number } },
  };
};

describe('audit verify (docs/audit.md "Verifying")', () => {
  it('audit chain: six session.ended events written through AuditTrail.record form one chain, seq 1 to 6, that verifies and reaches its checkpoint', async () => {
    expect(original.map((row) => row.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(original[0]).toMatchObject({
      type: 'session.ended',
      details: { sessionId: 'session-1', reason: 'signed-out' },
      subject: 'user-1',
    });
    const plain = await verify();
    expect(plain.code).toBe(0);
    expect(plain.report).toMatchObject({ ok: true, rows: 6, head: { seq: 6 } });
    const withCheckpoint = await verify('--checkpoint', checkpointFile);
    expect(withCheckpoint.code).toBe(0);
  }, 60_000);

  it('audit verify: an edited row is named (exit 1, "edited", its seq)', async () => {
    await withClosedDatabase(service, (db) =>
      db
        .update(auditEvents)
        .set({ details: { sessionId: 'other', reason: 'signed-out' } })
        .where(sql`seq = 3`),
    );
    const result = await verify();
    expect(result.code).toBe(1);
    expect(result.report.finding).toEqual({ kind: 'edited', seq: 3 });
    expect(result.stderr).toContain('row 3 was edited');
    await restore();
  }, 60_000);

  it('audit verify: a deleted row is named (exit 1, "deleted", its seq)', async () => {
    await withClosedDatabase(service, (db) => db.delete(auditEvents).where(sql`seq = 3`));
    const result = await verify();
    expect(result.code).toBe(1);
    expect(result.report.finding).toEqual({ kind: 'deleted', seq: 3 });
    await restore();
  }, 60_000);

  it('audit verify: an inserted row is named (exit 1, "inserted"), with the rows after it renumbered to close the gap', async () => {
    await withClosedDatabase(service, async (db) => {
      await db.update(auditEvents).set({ seq: sql`seq + 1000` }).where(gte(auditEvents.seq, 3));
      await db.update(auditEvents).set({ seq: sql`seq - 999` }).where(gte(auditEvents.seq, 1000));
      await insertAuditEvents(db, [{ ...original[2]!, subject: 'mallory', details: { sessionId: 'forged', reason: 'signed-out' } }]);
    });
    const result = await verify();
    expect(result.code).toBe(1);
    expect(result.report.finding).toEqual({ kind: 'inserted', seq: 3 });
    await restore();
  }, 60_000);

  it('audit verify --checkpoint: a tail cut off after the checkpoint is found ("truncated"), which the chain alone cannot show', async () => {
    await withClosedDatabase(service, (db) => db.delete(auditEvents).where(gte(auditEvents.seq, 5)));
    expect((await verify()).code).toBe(0);
    const result = await verify('--checkpoint', checkpointFile);
    expect(result.code).toBe(1);
    expect(result.report.finding).toEqual({ kind: 'truncated', seq: 4, checkpointSeq: 6 });
    await restore();
  }, 60_000);

  it('audit verify --checkpoint: a file without a checkpoint signed by this key is a usage error (exit 2)', async () => {
    const result = await verify('--checkpoint', dataFile(service, 'not-a-checkpoint', 'aaaaaaaaaaaa.bbbbbbbbbbbb.cccccccccccc'));
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
  }, 60_000);
});

describe('audit export (docs/audit.md "Exporting")', () => {
  it.each(['yesterday', '2026-13-45T00:00:00Z', '-1h', ''])(
    'audit export: a bad --since (%j) exits 2 with a clear message and writes nothing',
    async (since) => {
      const result = await runAudit(service, ['export', '--since', since]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      // A value that starts with a dash is refused by the argument parser itself, which says how to pass one.
      expect(result.stderr).toMatch(since.startsWith('-') ? /--since=-/ : /--since .*(ISO time|duration)/);
    },
    60_000,
  );

  it('audit export --since 1h: one JSON object per line with exactly seq, time, type, actor, subject, address, userAgent, requestId, details, mac; the checkpoint on stderr verifies', async () => {
    const result = await runAudit(service, ['export', '--since', '1h']);
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(6);
    for (const line of lines)
      expect(Object.keys(line)).toEqual(['seq', 'time', 'type', 'actor', 'subject', 'address', 'userAgent', 'requestId', 'details', 'mac']);
    expect(lines[5]).toMatchObject({ seq: 6, type: 'session.ended', mac: original[5]!.mac });
    const future = await runAudit(service, ['export', '--since', new Date(Date.now() + 3_600_000).toISOString()]);
    expect(future.stdout).toBe('');
    const file = dataFile(service, 'exported-checkpoint.txt', result.stderr);
    expect((await verify('--checkpoint', file)).code).toBe(0);
  }, 60_000);
});

describe('audit retention (docs/audit.md "Retention")', () => {
  it("audit retention: rows go only behind a signed anchor of the first kept row's predecessor; verify still passes after the purge, and fails once the anchor is gone", async () => {
    const purged = await withClosedDatabase(service, (db) =>
      purgeAuditTrail(db, { signing: service.signingKey, before: new Date(original[2]!.time.getTime() + 1) }),
    );
    expect(purged.purged).toBe(3);
    expect(purged.anchor).toMatchObject({ seq: 3, mac: original[2]!.mac });
    const { kid, alg, key } = service.signingKey;
    const signed = await readCheckpoint(purged.anchor!.checkpoint, { keys: [{ ...(await exportJWK(createPublicKey(key))), kid, alg }] });
    expect(signed).toEqual({ seq: 3, mac: original[2]!.mac });
    const { kept, anchors } = await withClosedDatabase(service, async (db) => ({
      kept: await db.select({ seq: auditEvents.seq }).from(auditEvents),
      anchors: await db.select().from(auditAnchors),
    }));
    expect(kept.map((row) => row.seq).sort()).toEqual([4, 5, 6]);
    expect(anchors).toHaveLength(1);
    const after = await verify('--checkpoint', checkpointFile);
    expect(after.code).toBe(0);
    expect(after.report).toMatchObject({ ok: true, rows: 3, from: 3, head: { seq: 6 } });
    await withClosedDatabase(service, (db) => db.delete(auditAnchors).where(lte(auditAnchors.seq, 3)));
    const unanchored = await verify();
    expect(unanchored.code).toBe(1);
    expect(unanchored.report.finding).toEqual({ kind: 'deleted', seq: 1 });
  }, 60_000);
});
