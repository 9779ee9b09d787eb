import { Writable } from 'node:stream';
import { listDeprecatedUses } from '@latchkey/db';
import { openOwnDatabase, statementsDuring } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { createDeprecatedUses, DEPRECATED_USE_WRITE_MS } from './deprecated-uses.js';

const TIME = { coordinate: 'Status.time', reason: 'Use `serverTime`.' };
const ORDER = { coordinate: 'Query.documents.order', reason: 'Always newest first.' };

let own: Awaited<ReturnType<typeof openOwnDatabase>>;
beforeAll(async () => {
  own = await openOwnDatabase('deprecated-uses');
});
afterAll(() => own?.close());

/** The recorder on the test's clock, writing through the request database (its statements are counted), its logs kept. */
function recorder(db = own.database.db) {
  let clock = Date.parse('2026-12-05T10:00:00Z');
  const counted: string[] = [];
  const lines: { level: number; msg: string; failures?: number }[] = [];
  const logger = createLogger('info', {
    destination: new Writable({ write: (chunk, _encoding, done) => done(void lines.push(JSON.parse(String(chunk)))) }),
  });
  const uses = createDeprecatedUses({
    db,
    logger,
    count: (coordinate, client) => counted.push(`${coordinate} ${client}`),
    now: () => clock,
  });
  return { uses, counted, lines, advance: (ms: number) => void (clock += ms), at: () => new Date(clock) };
}

const rowsOf = async (client: string) =>
  (await listDeprecatedUses(own.database.db))
    .filter((row) => row.client === client)
    .map(({ coordinate, lastUsedAt }) => [coordinate, lastUsedAt]);

describe('the last use of each deprecated coordinate by each client', () => {
  it('is written at most once a minute per pair and instance, the pairs of one turn in one statement; every use is counted', async () => {
    const { uses, counted, advance, at } = recorder();
    const first = at();
    const { statements } = await statementsDuring(async () => {
      uses.used([TIME, ORDER], 'ios');
      uses.used([TIME], 'ios');
      await uses.idle();
    });
    expect(statements).toHaveLength(1);
    expect(await rowsOf('ios')).toEqual(
      expect.arrayContaining([
        ['Status.time', first],
        ['Query.documents.order', first],
      ]),
    );

    advance(DEPRECATED_USE_WRITE_MS - 1);
    const quiet = await statementsDuring(async () => {
      uses.used([TIME, ORDER], 'ios');
      await uses.idle();
    });
    expect(quiet.statements).toHaveLength(0);

    advance(1);
    uses.used([TIME], 'ios');
    uses.used([TIME], 'android'); // another client: a pair of its own
    await uses.idle();
    expect(await rowsOf('ios')).toEqual(
      expect.arrayContaining([
        ['Status.time', at()],
        ['Query.documents.order', first],
      ]),
    );
    expect(await rowsOf('android')).toEqual([['Status.time', at()]]);
    expect(counted).toEqual([
      'Status.time ios',
      'Query.documents.order ios',
      'Status.time ios',
      'Status.time ios',
      'Query.documents.order ios',
      'Status.time ios',
      'Status.time android',
    ]);
  });

  it('a database that fails the write fails no use: logged at warn once a minute with the failures since, counted all the same', async () => {
    const gone = await openOwnDatabase('deprecated-uses-gone');
    await gone.close();
    const { uses, counted, lines, advance } = recorder(gone.database.background);
    uses.used([TIME], 'ios');
    await uses.idle();
    uses.used([ORDER], 'ios');
    await uses.idle();
    expect(lines).toEqual([expect.objectContaining({ level: 40, failures: 1, msg: expect.stringContaining('deprecated fields failed') })]);
    advance(DEPRECATED_USE_WRITE_MS);
    uses.used([TIME], 'ios');
    await uses.idle();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ level: 40, failures: 2 });
    expect(counted).toEqual(['Status.time ios', 'Query.documents.order ios', 'Status.time ios']);
  });
});
