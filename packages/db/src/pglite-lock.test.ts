import { spawn } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDatabase } from './client.js';
import { DatabaseInUseError } from './pglite-lock.js';
import { seedPgliteDataDir, testTempDir } from './testing/template.js';

// The embedded database serves one process at a time: a second opener is refused, not let in to corrupt it.
describe('embedded database ownership (pglite.lock)', () => {
  const dirs: string[] = [];
  // A copy of the migrated template: the lock is the subject here, not booting an empty database.
  const dataDir = () => {
    const dir = testTempDir('lock');
    seedPgliteDataDir(dir);
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('a directory open in another live process is refused with DATABASE_IN_USE naming that process', async () => {
    const dir = dataDir();
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      writeFileSync(join(dir, 'pglite.lock'), `${other.pid}\n`);
      const refused = await createDatabase({ dataDir: dir }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(DatabaseInUseError);
      expect(refused).toMatchObject({ code: 'DATABASE_IN_USE', ownerPid: other.pid });
      expect((refused as Error).message).toContain(`process ${other.pid}`);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('the lock of a process that is gone is taken over; closing removes it', async () => {
    const dir = dataDir();
    const gone = spawn(process.execPath, ['-e', '']);
    await new Promise((done) => gone.once('exit', done));
    writeFileSync(join(dir, 'pglite.lock'), `${gone.pid}\n`);
    const database = await createDatabase({ dataDir: dir });
    expect(existsSync(join(dir, 'pglite.lock'))).toBe(true);
    await database.close();
    expect(existsSync(join(dir, 'pglite.lock'))).toBe(false);
  });

  it('a second open in the same process is refused while the first is open, and allowed after it closed', async () => {
    const dir = dataDir();
    const first = await createDatabase({ dataDir: dir });
    await expect(createDatabase({ dataDir: dir })).rejects.toBeInstanceOf(DatabaseInUseError);
    await first.close();
    const again = await createDatabase({ dataDir: dir });
    await again.close();
  });
});
