import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import { isStorable, parseDateTime } from '../../domain/validate.js';

function toDate(value: unknown): Date | null {
  if (value instanceof Date) return isStorable(value) ? value : null;
  return typeof value === 'string' ? parseDateTime(value) : null;
}

/**
 * No `extensions.code` here: graphql-js wraps the error with the value's location and Yoga / useErrorCodes
 * give it its code, so a bad literal is a validation failure and a bad variable a coercion failure
 * (BAD_USER_INPUT), both 400 under graphql-response+json and 200 under application/json.
 */
function invalid(value: unknown, node?: ValueNode): GraphQLError {
  return new GraphQLError(`DateTime must be an ISO 8601 string with a time zone, got ${JSON.stringify(value)?.slice(0, 40)}`, {
    nodes: node,
  });
}

const twoDigits = (value: number) => (value < 10 ? `0${value}` : `${value}`);

/**
 * `date.toISOString()`, written out field by field: the same text (`2026-11-24T10:00:00.123Z`) in about half the
 * time, which counts on a page where every row carries timestamps. Years before 1000 (padded with zeros) are left to
 * `toISOString`; the scalar never serializes a year outside 1-9999 (`isStorable`).
 */
function isoText(date: Date): string {
  const year = date.getUTCFullYear();
  if (year < 1000) return date.toISOString();
  const milliseconds = date.getUTCMilliseconds();
  const fraction = milliseconds < 10 ? `00${milliseconds}` : milliseconds < 100 ? `0${milliseconds}` : `${milliseconds}`;
  return `${year}-${twoDigits(date.getUTCMonth() + 1)}-${twoDigits(date.getUTCDate())}T${twoDigits(date.getUTCHours())}:${twoDigits(
    date.getUTCMinutes(),
  )}:${twoDigits(date.getUTCSeconds())}.${fraction}Z`;
}

export const DateTime = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  serialize(value) {
    const date = typeof value === 'number' ? new Date(value * 1000) : toDate(value);
    if (!date) throw new TypeError('DateTime cannot represent this value');
    return isoText(date);
  },
  parseValue(value) {
    const date = toDate(value);
    if (!date) throw invalid(value);
    return date;
  },
  parseLiteral(ast) {
    const date = ast.kind === Kind.STRING ? toDate(ast.value) : null;
    if (!date) throw invalid(ast.kind === Kind.STRING ? ast.value : ast.kind, ast);
    return date;
  },
});
