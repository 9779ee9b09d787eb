import { parse, specifiedRules, validate } from 'graphql';
import { buildSchema } from '../../src/graphql/schema.js';
import { queryLimitRules } from '../../src/graphql/plugins/use-query-limits.js';
import { DASHBOARD_QUERY } from './settings.js';
/**
 * What skipping parse and validation is worth for the dashboard, measured in this process: parsing and
 * validating its text against the real schema and limit rules (what a text request costs on a cold cache),
 * microseconds per operation.
 */
export function parseAndValidateMicros(iterations = 2000) {
    const schema = buildSchema();
    const rules = [...specifiedRules, ...queryLimitRules({ maxDepth: 15, maxAliases: 30, maxDirectives: 20 })];
    for (let i = 0; i < 200; i++)
        validate(schema, parse(DASHBOARD_QUERY), rules);
    let start = process.hrtime.bigint();
    let document = parse(DASHBOARD_QUERY);
    for (let i = 0; i < iterations; i++)
        document = parse(DASHBOARD_QUERY);
    const parseMicros = Number(process.hrtime.bigint() - start) / 1000 / iterations;
    start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++)
        validate(schema, document, rules);
    const validateMicros = Number(process.hrtime.bigint() - start) / 1000 / iterations;
    return { parse: parseMicros, validate: validateMicros };
}
//# sourceMappingURL=parse-cost.js.map