import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { isStorable, parseDateTime } from '../../domain/validate.js';
function toDate(value) {
    if (value instanceof Date)
        return isStorable(value) ? value : null;
    return typeof value === 'string' ? parseDateTime(value) : null;
}
/**
 * No `extensions.code` here: graphql-js wraps the error with the value's location and Yoga / useErrorCodes
 * give it its code, so a bad literal is a validation failure and a bad variable a coercion failure
 * (BAD_USER_INPUT), both 400 under graphql-response+json and 200 under application/json.
 */
function invalid(value, node) {
    return new GraphQLError(`DateTime must be an ISO 8601 string with a time zone, got ${JSON.stringify(value)?.slice(0, 40)}`, {
        nodes: node,
    });
}
export const DateTime = new GraphQLScalarType({
    name: 'DateTime',
    serialize(value) {
        const date = typeof value === 'number' ? new Date(value * 1000) : toDate(value);
        if (!date)
            throw new TypeError('DateTime cannot represent this value');
        return date.toISOString();
    },
    parseValue(value) {
        const date = toDate(value);
        if (!date)
            throw invalid(value);
        return date;
    },
    parseLiteral(ast) {
        const date = ast.kind === Kind.STRING ? toDate(ast.value) : null;
        if (!date)
            throw invalid(ast.kind === Kind.STRING ? ast.value : ast.kind, ast);
        return date;
    },
});
//# sourceMappingURL=scalars.js.map