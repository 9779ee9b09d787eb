import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options?: { type: 'minor' | 'major' }) => void;
let collect: Collect | undefined;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const oldSpaceUsed = () => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size;

/**
 * Bytes moved to the old generation by two young collections run after `work`, which made objects and dropped them:
 * what something still held keeps alive past the young collector (a WeakMap whose value leads back to its key, a
 * long-lived Set's replaced tables). Two full collections first, so what is long-lived already is old. Deterministic
 * on one process: no timers, collections asked for by `gc()` (exposed here, for the tests only).
 */
export async function promotedByYoungCollections(work: () => void): Promise<number> {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as Collect;
  }
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
