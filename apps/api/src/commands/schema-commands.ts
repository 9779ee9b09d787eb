// `pnpm latchkey schema check|usage`: a schema change against what clients are known to use, and who still uses each
// deprecated field (CONTRIBUTING.md, "Changing the schema"). They read schema/, the repository's operations and the
// database only, so they answer while an edit leaves codegen, typecheck or the build failing (scripts/latchkey.mjs
// runs them from the sources, without building).
import { parseArgs } from 'node:util';
import type { GraphQLSchema } from 'graphql';
import {
  affectedUse,
  clientView,
  compareSchemas,
  deprecatedCoordinates,
  operationUsage,
  type AffectedUse,
  type ClassifiedChange,
  type ContractReport,
} from '@latchkey/schema-contract';
import { parseDurationSeconds, type Config } from '../config/load.js';
import { knownUsage, type KnownUsage } from './schema-known-usage.js';
import { baseAtRevision, checkoutRoot, defaultBase, schemaOfFile, workingSchema, type Base } from './schema-sources.js';
import { UsageError } from './usage.js';

/** `--window 30d`: how far back a use counts; the instant it starts. */
function windowStart(window: string, command: string): Date {
  let seconds: number;
  try {
    seconds = parseDurationSeconds(window);
  } catch (error) {
    throw new UsageError(`${command}: --window ${(error as Error).message}`);
  }
  if (seconds <= 0) throw new UsageError(`${command}: --window must be positive`);
  return new Date(Date.now() - seconds * 1000);
}

/** Who a change reaches, for people. */
function describeUse(use: AffectedUse): string {
  const last = use.lastUsedAt ? `, last used ${use.lastUsedAt.toISOString()}` : '';
  const operation = use.operation === null ? 'an anonymous operation' : `operation ${use.operation}`;
  switch (use.source) {
    case 'repository':
      return `repository ${operation} (${use.file})`;
    case 'app':
      return `app ${use.app} ${use.version}, ${operation}${last}`;
    case 'apq':
      return `an APQ registration, ${operation}${last}`;
    case 'client':
      return `client ${use.client} (a recorded use${last})`;
  }
}

function describeChange(change: ClassifiedChange): string[] {
  const tag = change.safeByUsage ? 'safe' : change.level.toUpperCase();
  const why = change.safeByUsage ? ' (breaking, but no known client uses it)' : '';
  const head = `${tag.padEnd(10)} ${change.coordinate ? `${change.coordinate}: ` : ''}${change.message}${why}`;
  return [head, ...change.affected.map((use) => `${' '.repeat(11)}${describeUse(use)}`)];
}

const reaches = (report: ContractReport, level: 'breaking' | 'dangerous') =>
  report.changes.filter((change) => change.level === level && change.affected.length > 0).length;

/** The outcome, and the exit code it gives: 1 when a change breaks a known client (or, asked to, endangers one). */
function outcomeOf(report: ContractReport, failOnDangerous: boolean): { result: 'broken' | 'dangerous' | 'ok'; exitCode: number } {
  if (reaches(report, 'breaking') > 0) return { result: 'broken', exitCode: 1 };
  if (reaches(report, 'dangerous') > 0) return { result: 'dangerous', exitCode: failOnDangerous ? 1 : 0 };
  return { result: 'ok', exitCode: 0 };
}

function printText(base: Base | string, window: string, known: KnownUsage, report: ContractReport, failOnDangerous: boolean): void {
  const { counts } = known;
  const lines = [
    `schema check: schema/ against ${typeof base === 'string' ? 'no base' : base.label}`,
    ...(typeof base === 'string' ? [`note: ${base}`] : []),
    ...known.notes.map((note) => `note: ${note}`),
    `known: ${counts.repository} repository operations, ${counts.appVersions} active app versions (${counts.appDocuments} documents), ` +
      `${counts.apq} APQ registrations used within ${window}`,
    ...report.changes.flatMap(describeChange),
    ...report.alreadyInvalid.map((use) => `note: already invalid before this change: ${describeUse(use)}`),
  ];
  const broken = reaches(report, 'breaking');
  const dangerous = reaches(report, 'dangerous');
  if (broken > 0) lines.push(`${broken} breaking ${broken === 1 ? 'change reaches' : 'changes reach'} a client in use: exit 1`);
  else if (dangerous > 0)
    lines.push(
      `${dangerous} dangerous ${dangerous === 1 ? 'change reaches' : 'changes reach'} a client in use${failOnDangerous ? ': exit 1' : ''}`,
    );
  else lines.push(report.changes.length === 0 ? 'no changes break a known client' : 'nothing breaks a known client');
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function check(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      base: { type: 'string' },
      'base-file': { type: 'string' },
      window: { type: 'string', default: '30d' },
      'fail-on-dangerous': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.base !== undefined && values['base-file'] !== undefined)
    throw new UsageError('schema check: give --base or --base-file, not both');
  const since = windowStart(values.window, 'schema check');
  const root = checkoutRoot();
  const current = workingSchema(root);
  const base: Base | string =
    values['base-file'] !== undefined
      ? { label: `--base-file ${values['base-file']}`, schema: schemaOfFile(values['base-file']) }
      : values.base !== undefined
        ? baseAtRevision(root, values.base)
        : defaultBase(root);
  const known = await knownUsage(config, root, since);
  const recent = known.uses.filter((use) => use.lastUsedAt >= since);
  const report = await compareSchemas(
    typeof base === 'string' ? null : clientView(base.schema),
    clientView(current),
    known.operations,
    recent,
  );
  const { result, exitCode } = outcomeOf(report, values['fail-on-dangerous']);
  if (values.json) {
    const notes = [...(typeof base === 'string' ? [base] : []), ...known.notes];
    const baseOf = typeof base === 'string' ? null : base.label;
    const { changes, alreadyInvalid } = report;
    process.stdout.write(
      `${JSON.stringify({ base: baseOf, window: values.window, known: known.counts, notes, result, changes, alreadyInvalid })}\n`,
    );
  } else printText(base, values.window, known, report, values['fail-on-dangerous']);
  process.exitCode = exitCode;
}

/** One deprecated coordinate, who still uses it, and whether anyone did within the window. */
interface CoordinateUsage {
  coordinate: string;
  reason: string;
  documents: AffectedUse[];
  clients: { client: string; lastUsedAt: Date; withinWindow: boolean }[];
  safeToRemove: boolean;
}

function usageOfCoordinates(since: Date, known: KnownUsage, current: GraphQLSchema): CoordinateUsage[] {
  const selecting = known.operations.map((operation) => ({ operation, used: operationUsage(current, operation.document).coordinates }));
  return deprecatedCoordinates(current).map(({ coordinate, reason }) => {
    const documents = selecting.filter(({ used }) => used.has(coordinate)).map(({ operation }) => affectedUse(operation));
    const clients = known.uses
      .filter((use) => use.coordinate === coordinate)
      .map(({ client, lastUsedAt }) => ({ client, lastUsedAt, withinWindow: lastUsedAt >= since }));
    return { coordinate, reason, documents, clients, safeToRemove: documents.length === 0 && !clients.some((use) => use.withinWindow) };
  });
}

function printUsage(window: string, known: KnownUsage, coordinates: CoordinateUsage[]): void {
  const lines = known.notes.map((note) => `note: ${note}`);
  if (coordinates.length === 0) lines.push('the schema deprecates nothing');
  for (const { coordinate, reason, documents, clients, safeToRemove } of coordinates) {
    lines.push(`${coordinate} (deprecated: ${reason})`);
    for (const use of documents) lines.push(`  selected by ${describeUse(use)}`);
    for (const use of clients)
      lines.push(
        `  used by client ${use.client}, last ${use.lastUsedAt.toISOString()}${use.withinWindow ? '' : ` (before the last ${window})`}`,
      );
    lines.push(safeToRemove ? `  nobody used it within ${window}: safe to remove` : `  in use within ${window}: keep it`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function usage(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { window: { type: 'string', default: '30d' }, json: { type: 'boolean', default: false } },
    strict: true,
  });
  const since = windowStart(values.window, 'schema usage');
  const root = checkoutRoot();
  const current = clientView(workingSchema(root));
  const known = await knownUsage(config, root, since);
  const coordinates = usageOfCoordinates(since, known, current);
  if (values.json) process.stdout.write(`${JSON.stringify({ window: values.window, notes: known.notes, coordinates })}\n`);
  else printUsage(values.window, known, coordinates);
}

export async function schemaCommand(config: Config, args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'check') return check(config, rest);
  if (action === 'usage') return usage(config, rest);
  throw new UsageError(
    'schema: use "schema check [--base REF | --base-file FILE] [--window 30d] [--fail-on-dangerous] [--json]" or "schema usage"',
  );
}
