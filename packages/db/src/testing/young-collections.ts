import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options?: { type: 'minor' | 'major' }) => void;
let collect: Collect | undefined;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const oldSpaceUsed = () => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size;

/**
 * Bytes moved to the old generation by two young collections run after `work`, which made objects and dropped them:
 * what something still held keeps alive past the young collector (a WeakMap whose value leads back to its key, a
 * long-lived Set's replaced tables). Two full collections first, so what is long-lived already is old. Collections
 * asked for by `gc()` (exposed here, for the tests only), no timers.
 *
 * The least of three measurements: whatever else the process does between them (a test runner's messages, code
 * compiled on its first run, whose bytecode is made in the old generation) only ever adds, and was seen to add up to
 * 0.15 MB to one measurement in a few dozen.
 *
 * V8's allocation-site pretenuring is off while it measures: once objects made at one place in the code have
 * survived young collections (as a first measurement's do, held through a WeakMap), V8 may decide to make that
 * place's later objects in the old generation at once, and a later measurement of the same code would count every
 * object it made as promoted (seen on Node 24, about one run in seven: 0.4-0.8 MB for a memo that keeps nothing).
 */
export async function promotedByYoungCollections(work: () => void): Promise<number> {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as Collect;
  }
  setFlagsFromString('--no-allocation-site-pretenuring');
  try {
    let least = Infinity;
    for (let round = 0; round < 3; round++) least = Math.min(least, await promotedOnce(work, collect));
    return least;
  } finally {
    setFlagsFromString('--allocation-site-pretenuring');
  }
}

async function promotedOnce(work: () => void, collect: Collect): Promise<number> {
  collect();
  collect();
  await nextTurn();
  const before = oldSpaceUsed();
  work();
  await nextTurn();
  collect({ type: 'minor' });
  await nextTurn();
  collect({ type: 'minor' });
  await nextTurn();
  return oldSpaceUsed() - before;
}
