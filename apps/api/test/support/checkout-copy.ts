import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { testTempDir } from '@latchkey/db/testing';
import { run, type Run } from './built-cli.js';

/** The checkout these tests run in. */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

const GIT_IDENTITY = ['-c', 'user.name=Latchkey tests', '-c', 'user.email=tests@latchkey.test', '-c', 'commit.gpgsign=false'];

/** A checkout of its own, in a temporary directory: edit its files, commit, run `pnpm latchkey` there. */
export interface CheckoutCopy {
  dir: string;
  git(...args: string[]): string;
  read(file: string): string;
  /** Replaces `from` with `to` in a file of the copy (failing when `from` is not there). */
  edit(file: string, from: string, to: string): void;
  /** `pnpm latchkey ...args` in the copy (scripts/latchkey.mjs, as pnpm runs it), with exactly `env` (plus PATH). */
  latchkey(args: string[], env?: Record<string, string | undefined>): Promise<Run>;
}

/** Links the installed packages in (the root's and each workspace package's node_modules): nothing is installed again. */
function linkInstalledPackages(dir: string): void {
  const workspaces = ['.', 'apps/api', ...readdirSync(path.join(REPOSITORY_ROOT, 'packages')).map((name) => `packages/${name}`)];
  for (const workspace of workspaces) {
    const installed = path.join(REPOSITORY_ROOT, workspace, 'node_modules');
    if (existsSync(installed) && existsSync(path.join(dir, workspace)))
      symlinkSync(installed, path.join(dir, workspace, 'node_modules'), 'dir');
  }
  // .gitignore's `node_modules/` names directories, and these are links: kept out of `git status` here.
  writeFileSync(path.join(dir, '.git/info/exclude'), 'node_modules\n');
}

function copyCheckoutAt(dir: string): CheckoutCopy {
  const git = (...args: string[]) =>
    execFileSync('git', [...GIT_IDENTITY, ...args], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return {
    dir,
    git,
    read: (file) => readFileSync(path.join(dir, file), 'utf8'),
    edit(file, from, to) {
      const text = readFileSync(path.join(dir, file), 'utf8');
      if (!text.includes(from)) throw new Error(`${file} has no ${JSON.stringify(from)}`);
      writeFileSync(path.join(dir, file), text.replace(from, to));
    },
    latchkey: (args, env = {}) => run(path.join(dir, 'scripts/latchkey.mjs'), args, env, dir),
  };
}

/**
 * This checkout's files as the working tree has them (tracked, and new files not ignored), in a new git repository
 * of their own with one commit, and the installed packages linked in. Nothing is built there.
 */
export function copyCheckout(label: string): CheckoutCopy {
  const dir = path.join(testTempDir(label), 'checkout');
  mkdirSync(dir);
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPOSITORY_ROOT,
    encoding: 'utf8',
  });
  for (const file of new Set(listed.split('\0').filter(Boolean))) {
    const from = path.join(REPOSITORY_ROOT, file);
    if (!existsSync(from)) continue; // deleted in the working tree
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    cpSync(from, path.join(dir, file));
  }
  const copy = copyCheckoutAt(dir);
  copy.git('init', '-q', '-b', 'main');
  copy.git('add', '-A');
  copy.git('commit', '-q', '-m', 'the checkout as the tests found it');
  linkInstalledPackages(dir);
  return copy;
}

/** A shallow clone (one commit deep) of a copy, with the installed packages linked in. */
export function shallowClone(of: CheckoutCopy, label: string): CheckoutCopy {
  const dir = path.join(testTempDir(label), 'shallow');
  execFileSync('git', ['clone', '-q', '--depth', '1', `file://${of.dir}`, dir], { stdio: 'ignore' });
  linkInstalledPackages(dir);
  return copyCheckoutAt(dir);
}
