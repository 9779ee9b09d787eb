import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

function toDate(value: unknown): Date | null {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value;
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value)) {
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? null : date;
  }
  return null;
}

function invalid(value: unknown): GraphQLError {
  return new GraphQLError(`DateTime must be an ISO 8601 string with a time zone, got ${JSON.stringify(value)?.slice(0, 40)}`, {
    extensions: { code: 'BAD_USER_INPUT' },
  });
}

export const DateTime = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  serialize(value) {
    const date = typeof value === 'number' ? new Date(value * 1000) : toDate(value);
    if (!date) throw new TypeError('DateTime cannot represent this value');
    return date.toISOString();
  },
  parseValue(value) {
    const date = toDate(value);
    if (!date) throw invalid(value);
    return date;
  },
  parseLiteral(ast) {
    const date = ast.kind === Kind.STRING ? toDate(ast.value) : null;
    if (!date) throw invalid(ast.kind === Kind.STRING ? ast.value : ast.kind);
    return date;
  },
});
