import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CodedError } from '@latchkey/errors';

// PGlite is PostgreSQL in one process: a second process that opens the same data directory runs its own
// recovery and checkpoints over the first one's files, and both lose writes or corrupt the directory. Nothing
// in PGlite stops it, so the directory gets an owner: `<dataDir>/pglite.lock` holds the pid of the process
// that has it open, and every other process is refused while that process lives.

/** The embedded database's directory is open in another live process. Fixed message, stable code. */
export class DatabaseInUseError extends CodedError<'DATABASE_IN_USE'> {
  constructor(readonly ownerPid: number) {
    super(
      'DatabaseInUseError',
      'DATABASE_IN_USE',
      `the embedded database is open in process ${ownerPid} (a running server?): it serves one process at a time. ` +
        'Stop that process first, or run both on PostgreSQL (DATABASE_URL).',
    );
  }
}

/** Lock files this process holds: a second open in the same process is refused too. */
const heldHere = new Set<string>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function ownerOf(lockFile: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(lockFile, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes this process the owner of `dataDir`'s embedded database, or throws `DatabaseInUseError`. A lock left
 * by a process that is gone (killed, crashed) is taken over; so is one that names this very pid (a container
 * restarted with its data volume: its process is pid 1 again). Returns the release function.
 */
export function acquirePgliteLock(dataDir: string): () => void {
  const lockFile = resolve(dataDir, 'pglite.lock');
  if (heldHere.has(lockFile)) throw new DatabaseInUseError(process.pid);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(lockFile, `${process.pid}\n`, { flag: 'wx' });
      heldHere.add(lockFile);
      return () => {
        heldHere.delete(lockFile);
        if (ownerOf(lockFile) === process.pid) rmSync(lockFile, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = ownerOf(lockFile);
    if (owner !== undefined && owner !== process.pid && isAlive(owner)) throw new DatabaseInUseError(owner);
    rmSync(lockFile, { force: true });
  }
  throw new DatabaseInUseError(ownerOf(lockFile) ?? 0);
}
