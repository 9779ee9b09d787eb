import { Column, getTableName, is, noopDecoder, SQL } from 'drizzle-orm';
import { columnDecoder } from './timestamps.js';

/** A selected field as drizzle orders them for a select: where the value goes, and what decodes it. */
export interface SelectedField {
  path: string[];
  field: unknown;
}

interface Decoder {
  mapFromDriverValue(value: unknown): unknown;
}

/** Rows as the drivers give them in array mode, turned into the objects the select's shape describes. */
export type RowMapper = (rows: unknown[][]) => unknown[];

const decoderOf = (field: unknown): Decoder => {
  if (is(field, Column)) return field;
  if (is(field, SQL)) return (field as unknown as { decoder: Decoder }).decoder;
  return (field as { sql: { decoder: Decoder } }).sql.decoder;
};

// The base class's decoder answers the value as it is: such columns need no call at all.
// (uuid, text, boolean and enum columns; `sql` fields without `mapWith`).
const passesThrough = (decoder: Decoder): boolean =>
  decoder.mapFromDriverValue === Column.prototype.mapFromDriverValue || decoder.mapFromDriverValue === noopDecoder.mapFromDriverValue;

/**
 * The same mapping as drizzle's `mapResultRow`, built once per statement instead of walked per column per row.
 * drizzle's walk checks each field's class (`is()`) and allocates a path iterator for every column of every row:
 * on a page of documents it was the largest allocation of the data path. The generated function creates each row
 * as one object literal of a fixed shape and calls a decoder only for columns that have one (timestamps, read by
 * `decodeTimestamptz`).
 *
 * It keeps drizzle's rule for a left-joined table: a nested object whose columns all come from one table that the
 * join may leave empty is null when its first column is null. Keys come from the schema's own field names (never
 * from input), and are quoted with JSON.stringify all the same.
 */
export function compileRowMapper(fields: readonly SelectedField[], joinsNotNullableMap?: Record<string, boolean>): RowMapper {
  if (fields.some((selected) => selected.path.length > 2)) throw new Error('compileRowMapper: selections nest at most one level');
  const decoders: Decoder[] = fields.map((selected) => decoderOf(selected.field));
  // A column decodes through `columnDecoder` (timestamps by the fast path), any other field through its own decoder.
  const decode = decoders.map((decoder) =>
    is(decoder, Column) ? columnDecoder(decoder) : (value: unknown) => decoder.mapFromDriverValue(value),
  );
  const value = (index: number) =>
    passesThrough(decoders[index]!) ? `r[${index}]` : `(r[${index}] === null ? null : d[${index}](r[${index}]))`;

  // Top-level keys in selection order, each a column or a group of columns.
  const top = new Map<string, number | number[]>();
  fields.forEach((selected, index) => {
    const [head, key] = selected.path;
    if (key === undefined) top.set(head!, index);
    else ((top.get(head!) as number[] | undefined) ?? (top.set(head!, []).get(head!) as number[])).push(index);
  });

  const parts: string[] = [];
  for (const [key, at] of top) {
    if (typeof at === 'number') {
      parts.push(`${JSON.stringify(key)}: ${value(at)}`);
      continue;
    }
    const object = `{ ${at.map((index) => `${JSON.stringify(fields[index]!.path[1])}: ${value(index)}`).join(', ')} }`;
    const tables = new Set(
      at.map((index) => (is(fields[index]!.field, Column) ? getTableName((fields[index]!.field as Column).table) : null)),
    );
    const [table] = tables;
    const nullable = joinsNotNullableMap !== undefined && tables.size === 1 && table !== null && !joinsNotNullableMap[table!];
    parts.push(`${JSON.stringify(key)}: ${nullable ? `r[${at[0]}] === null ? null : ${object}` : object}`);
  }
  const mapRow = new Function('d', `return (r) => ({ ${parts.join(', ')} });`)(decode) as (row: unknown[]) => unknown;
  return (rows) => {
    const mapped = new Array<unknown>(rows.length);
    for (let index = 0; index < rows.length; index++) mapped[index] = mapRow(rows[index]!);
    return mapped;
  };
}
