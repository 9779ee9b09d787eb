// Where `schema check` and `schema usage` read the schema and the repository's operations: the files of a checkout
// and its git history. Nothing here builds or imports the server: a half-done edit of the schema is read as it is.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { operationsOf, schemaOfSources, SourceError, type KnownOperation, type SourceFile } from '@latchkey/schema-contract';
import type { GraphQLSchema } from 'graphql';
import { UsageError } from './usage.js';

/** Where the repository's own client keeps its operations. */
const REPOSITORY_OPERATIONS = 'packages/client/src/operations';

/** The checkout the command runs in: the nearest directory from here up that has a `schema/` directory. */
export function checkoutRoot(from = process.cwd()): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'schema')) && statSync(join(dir, 'schema')).isDirectory()) return dir;
    if (dirname(dir) === dir) throw new UsageError('schema: no schema/ directory here or above (run it in a checkout of the repository)');
  }
}

const graphqlFilesIn = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => name.endsWith('.graphql'))
        .sort()
    : [];

/** A schema or document that does not parse or build is bad input: exit 2, naming file:line:col. */
function asUsageError<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof SourceError) throw new UsageError(`schema: ${error.message}`);
    throw error;
  }
}

/** The schema of the working tree's `schema/*.graphql`. */
export function workingSchema(root: string): GraphQLSchema {
  const files = graphqlFilesIn(join(root, 'schema')).map((name) => ({
    name: `schema/${name}`,
    body: readFileSync(join(root, 'schema', name), 'utf8'),
  }));
  if (files.length === 0) throw new UsageError('schema: schema/ has no .graphql files');
  return asUsageError(() => schemaOfSources(files));
}

/** The schema of one SDL file (`--base-file`: a printed schema, such as a release's `@latchkey/client/schema.graphql`). */
export function schemaOfFile(file: string): GraphQLSchema {
  let body: string;
  try {
    body = readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(`schema check: cannot read --base-file ${file}`);
  }
  return asUsageError(() => schemaOfSources([{ name: file, body }]));
}

/** The operations of this repository's client, each with its file. */
export function repositoryOperations(root: string): KnownOperation[] {
  return graphqlFilesIn(join(root, REPOSITORY_OPERATIONS)).flatMap((name) => {
    const file = `${REPOSITORY_OPERATIONS}/${name}`;
    return asUsageError(() => operationsOf({ name: file, body: readFileSync(join(root, file), 'utf8') }, { source: 'repository', file }));
  });
}

/** git in the checkout; undefined when it fails (no git, not a repository, an unknown revision). */
function git(root: string, args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 });
  } catch {
    return undefined;
  }
}

/** A revision's commit id, or undefined when the clone does not have it. */
const commitOf = (root: string, revision: string) =>
  git(root, ['rev-parse', '--verify', '--quiet', `${revision}^{commit}`])?.trim() || undefined;

/** The base a schema change is compared with, as the command names it. */
export interface Base {
  /** how it was chosen, for people: `HEAD^ (1a2b3c4)`, `--base-file FILE` */
  label: string;
  schema: GraphQLSchema;
}

/** The schema at a commit: its `schema/*.graphql` as git holds them. */
function schemaAtCommit(root: string, commit: string, label: string): GraphQLSchema {
  const schemaDir = relative(git(root, ['rev-parse', '--show-toplevel'])?.trim() ?? root, join(root, 'schema')) || 'schema';
  const names = (git(root, ['ls-tree', '--name-only', '-z', commit, '--', `${schemaDir}/`]) ?? '')
    .split('\0')
    .filter((path) => path.endsWith('.graphql'));
  if (names.length === 0) throw new UsageError(`schema check: ${label} has no schema/*.graphql`);
  const files: SourceFile[] = names.map((path) => ({
    name: `${label}:${path}`,
    body: git(root, ['cat-file', 'blob', `${commit}:${path}`]) ?? '',
  }));
  return asUsageError(() => schemaOfSources(files));
}

/** `--base REF`: that revision's schema; a revision the clone does not have is bad input. */
export function baseAtRevision(root: string, revision: string): Base {
  // A revision is never an option of git's.
  const commit = revision.startsWith('-') ? undefined : commitOf(root, revision);
  if (!commit) throw new UsageError(`schema check: --base ${revision} is not a revision of this clone`);
  const label = `${revision} (${commit.slice(0, 7)})`;
  return { label, schema: schemaAtCommit(root, commit, revision) };
}

/**
 * Without `--base`: HEAD's schema while `schema/` has uncommitted changes (the edit in progress), else HEAD's
 * parent's (so a clean clone checks its last commit's change). A string when there is no such base (not a git
 * checkout, a root commit, a shallow clone): why, in one line.
 */
export function defaultBase(root: string): Base | string {
  const changed = git(root, ['status', '--porcelain', '--', 'schema']);
  if (changed === undefined) return 'no git history here: every known operation is checked against schema/ as it is';
  const revision = changed.trim() ? 'HEAD' : 'HEAD^';
  const commit = commitOf(root, revision);
  if (!commit)
    return `${revision} is not in this clone (a first commit, or a shallow clone): every known operation is checked against schema/ as it is`;
  return { label: `${revision} (${commit.slice(0, 7)})`, schema: schemaAtCommit(root, commit, revision) };
}
