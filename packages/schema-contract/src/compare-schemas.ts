import { CriticalityLevel, diff, type Change } from '@graphql-inspector/core';
import { isEnumType, isInputObjectType, specifiedRules, validate, type GraphQLSchema } from 'graphql';
import { operationUsage, type OperationUsage } from './coordinates.js';
import type { KnownOperation } from './known-operation.js';

export type ChangeLevel = 'breaking' | 'dangerous' | 'safe';

/** A client's recorded use of a deprecated coordinate (the server records who selects them, and when). */
export interface RecordedUse {
  readonly coordinate: string;
  readonly client: string;
  readonly lastUsedAt: Date;
}

/** Who a change touches: a known operation, or a client's recorded use of a deprecated coordinate. */
export interface AffectedUse {
  source: 'repository' | 'app' | 'apq' | 'client';
  app: string | null;
  version: string | null;
  operation: string | null;
  lastUsedAt: Date | null;
  /** a repository operation's file */
  file?: string;
  /** the client of a recorded use */
  client?: string;
}

export interface ClassifiedChange {
  /** what the change means for the known clients: a breaking change nobody uses is safe */
  level: ChangeLevel;
  /** graphql-inspector's judgement of the change itself, before usage */
  criticality: ChangeLevel;
  /** a breaking change that touches no known operation or recorded use */
  safeByUsage: boolean;
  /** graphql-inspector's change type, or DOCUMENT_INVALID for an operation no change explains */
  type: string;
  /** the schema coordinate it changes (`Type`, `Type.field`, `Type.field.argument`, `Enum.VALUE`); null for DOCUMENT_INVALID */
  coordinate: string | null;
  message: string;
  affected: AffectedUse[];
}

export interface ContractReport {
  changes: ClassifiedChange[];
  /** known operations that did not validate against the base either: none of these changes broke them */
  alreadyInvalid: AffectedUse[];
}

const LEVEL: Record<CriticalityLevel, ChangeLevel> = {
  [CriticalityLevel.Breaking]: 'breaking',
  [CriticalityLevel.Dangerous]: 'dangerous',
  [CriticalityLevel.NonBreaking]: 'safe',
};

/** One known operation as the comparison sees it. */
interface Judged {
  use: AffectedUse;
  /** what it uses of the base schema */
  usage: OperationUsage;
  /** its validation errors against the new schema */
  errors: readonly string[];
}

/** A known operation as a use a change reaches. */
export function affectedUse(operation: KnownOperation): AffectedUse {
  const { source, app, version, file, lastUsedAt } = operation;
  return {
    source,
    app: app ?? null,
    version: version ?? null,
    operation: operation.operation,
    lastUsedAt: lastUsedAt ?? null,
    ...(file ? { file } : {}),
  };
}

const errorsAgainst = (schema: GraphQLSchema, operation: KnownOperation) =>
  validate(schema, operation.document, specifiedRules).map((error) => error.message);

/**
 * The coordinate whose users a change at `coordinate` reaches besides its own and those below it: an argument's field
 * (a default changed, a required argument added), an input field's or an enum value's type (a value added that a
 * client may receive, a required input field added that a variable lacks). A field's type is not: a change to one
 * field reaches only those who select it.
 */
function reachedParent(coordinate: string, schemas: readonly GraphQLSchema[]): string | undefined {
  const parts = coordinate.split('.');
  if (parts.length === 3) return `${parts[0]}.${parts[1]}`;
  if (parts.length !== 2) return undefined;
  const parent = schemas.map((schema) => schema.getType(parts[0]!)).find(Boolean);
  return isInputObjectType(parent) || isEnumType(parent) ? parts[0] : undefined;
}

function touches(usage: OperationUsage, coordinate: string, parent: string | undefined): boolean {
  if (usage.coordinates.has(coordinate) || (parent !== undefined && usage.coordinates.has(parent))) return true;
  const below = `${coordinate}.`;
  for (const used of usage.coordinates) if (used.startsWith(below)) return true;
  return false;
}

/** The recorded uses of the coordinate or of one below it (a removed type's fields). */
const recordedUsesOf = (uses: readonly RecordedUse[], coordinate: string): AffectedUse[] =>
  uses
    .filter((use) => use.coordinate === coordinate || use.coordinate.startsWith(`${coordinate}.`))
    .map((use) => ({ source: 'client', app: null, version: null, operation: null, lastUsedAt: use.lastUsedAt, client: use.client }));

/** graphql-inspector's path, as a schema coordinate (a directive usage's path names the field it is on). */
const coordinateOf = (change: Change) => (change.path ?? '').replace(/\.@[^.]+$/, '') || null;

function classify(
  change: Change,
  judged: readonly Judged[],
  uses: readonly RecordedUse[],
  schemas: readonly GraphQLSchema[],
): ClassifiedChange {
  const criticality = LEVEL[change.criticality.level];
  const coordinate = coordinateOf(change);
  const { message } = change;
  const type = String(change.type);
  if (criticality === 'safe' || coordinate === null)
    return { level: criticality, coordinate, message, criticality, safeByUsage: false, type, affected: [] };
  const parent = reachedParent(coordinate, schemas);
  const affected = judged.filter(({ usage }) => touches(usage, coordinate, parent)).map(({ use }) => use);
  if (criticality === 'breaking') affected.push(...recordedUsesOf(uses, coordinate));
  const safeByUsage = criticality === 'breaking' && affected.length === 0;
  return { level: safeByUsage ? 'safe' : criticality, coordinate, message, criticality, safeByUsage, type, affected };
}

/** Operations that no longer validate and that no breaking change names: one change each kind of error, named by it. */
function unexplained(judged: readonly Judged[], changes: readonly ClassifiedChange[]): ClassifiedChange[] {
  const explained = new Set(changes.filter((change) => change.level === 'breaking').flatMap((change) => change.affected));
  const byError = new Map<string, AffectedUse[]>();
  for (const { use, errors } of judged) {
    if (errors.length === 0 || explained.has(use)) continue;
    const list = byError.get(errors[0]!) ?? [];
    list.push(use);
    byError.set(errors[0]!, list);
  }
  return [...byError].map(([message, affected]) => ({
    level: 'breaking',
    coordinate: null,
    message,
    criticality: 'breaking',
    safeByUsage: false,
    type: 'DOCUMENT_INVALID',
    affected,
  }));
}

/**
 * Compares a schema with its base against what clients are known to use: graphql-inspector judges each change
 * (breaking, dangerous, safe), and the known operations and recorded uses say whom it reaches. A breaking change that
 * reaches nobody is safe by usage; an operation that no longer validates is broken, whichever change did it. Without
 * a base (none to compare with), only the known operations are checked against `current`.
 */
export async function compareSchemas(
  base: GraphQLSchema | null,
  current: GraphQLSchema,
  operations: readonly KnownOperation[],
  uses: readonly RecordedUse[] = [],
): Promise<ContractReport> {
  const alreadyInvalid: AffectedUse[] = [];
  const judged: Judged[] = [];
  for (const operation of operations) {
    if (base && errorsAgainst(base, operation).length > 0) {
      alreadyInvalid.push(affectedUse(operation));
      continue;
    }
    const usage = operationUsage(base ?? current, operation.document);
    judged.push({ use: affectedUse(operation), usage, errors: errorsAgainst(current, operation) });
  }
  const schemas = base ? [base, current] : [current];
  const changes = base ? (await diff(base, current)).map((change) => classify(change, judged, uses, schemas)) : [];
  return { changes: [...changes, ...unexplained(judged, changes)], alreadyInvalid };
}
