import { defaultFieldResolver, getDirectiveValues, isObjectType, } from 'graphql';
import { combineStepUp, meetsStepUp, StepUpRequired, validateStepUp } from '@latchkey/auth/tokens';
import { insufficientUserAuthentication } from '../errors.js';
const wrapped = new WeakSet();
const systemClock = () => Math.floor(Date.now() / 1000);
const hasMark = (node, name) => node?.directives?.some((d) => d.name.value === name) ?? false;
/**
 * The `@stepUp(acr:, maxAge:)` marks of a schema, by "Type.field", validated (a known level, a whole number of
 * seconds, never on a public field). Read once, at start-up.
 */
export function stepUpMarks(schema, options = {}) {
    const name = options.directive ?? 'stepUp';
    const publicName = options.publicDirective ?? 'public';
    const directive = schema.getDirective(name);
    const marks = new Map();
    if (!directive)
        return marks;
    for (const type of Object.values(schema.getTypeMap())) {
        if (!isObjectType(type) || type.name.startsWith('__'))
            continue;
        const typePublic = [type.astNode, ...type.extensionASTNodes].some((node) => hasMark(node, publicName));
        for (const field of Object.values(type.getFields())) {
            const node = field.astNode;
            if (!hasMark(node, name))
                continue;
            const where = `${type.name}.${field.name}`;
            if (hasMark(node, publicName) || typePublic)
                throw new Error(`${where}: a @${publicName} field cannot ask for @${name}`);
            const values = (getDirectiveValues(directive, node) ?? {});
            marks.set(where, validateStepUp(values, `${where} @${name}`));
        }
    }
    return marks;
}
/**
 * Step-up at the resource server (spec Multi-factor rules 6, RFC 9470): wraps the resolver of every field marked
 * `@stepUp` so that, before it runs, the caller's token must meet the requirement, else `StepUpRequired` is
 * thrown at the field's path (`useStepUp` turns it into INSUFFICIENT_USER_AUTHENTICATION).
 *
 * Apply it BEFORE `applyDirectiveRules`: that wraps around this, so a field's `@auth`/`@can` marks are checked
 * first and a caller who is not allowed at all is still UNAUTHENTICATED or FORBIDDEN, never challenged. The
 * record-level rules in the services run after it, inside the resolver. Unmarked fields cost nothing; a marked
 * one costs one synchronous comparison.
 */
export function applyStepUpRules(schema, options = {}) {
    if (wrapped.has(schema))
        return schema;
    wrapped.add(schema);
    const now = options.now ?? systemClock;
    const marks = stepUpMarks(schema, options);
    for (const [coordinate, requirement] of marks) {
        const [typeName, fieldName] = coordinate.split('.');
        const field = schema.getType(typeName).getFields()[fieldName];
        const resolve = field.resolve ?? defaultFieldResolver;
        field.resolve = (source, args, context, info) => {
            if (!meetsStepUp(context.caller, requirement, now()))
                throw new StepUpRequired(requirement);
            return resolve(source, args, context, info);
        };
    }
    return schema;
}
/** Replaces the errors caused by `StepUpRequired` (from a mark or from a service); leaves every other error alone. */
export function convertStepUps(result) {
    let challenge;
    for (const error of result.errors ?? []) {
        if (error.originalError instanceof StepUpRequired) {
            challenge = challenge ? combineStepUp(challenge, error.originalError.requirement) : error.originalError.requirement;
        }
    }
    if (!challenge)
        return result;
    // One response, one challenge: when several fields fall short, the header states what meets them all.
    const errors = result.errors.map((error) => error.originalError instanceof StepUpRequired
        ? insufficientUserAuthentication(error.originalError.requirement, error, challenge)
        : error);
    return { ...result, errors };
}
/**
 * Envelop plugin: converts `StepUpRequired` thrown in resolvers into INSUFFICIENT_USER_AUTHENTICATION errors
 * (`extensions`: `code`, `acr_values`, `max_age`; 401 + `WWW-Authenticate` under graphql-response+json) before
 * error logging and masking see them. Register it next to `useAuthorizationErrors`, before `useErrorLog`.
 * The marks themselves are applied to the schema by `applyStepUpRules` (see there for why not here).
 */
export function useStepUp() {
    // One shared hook object: nothing is allocated per request.
    const afterExecute = {
        onExecuteDone({ result, setResult, }) {
            if (Symbol.asyncIterator in result || !result.errors)
                return;
            const converted = convertStepUps(result);
            if (converted !== result)
                setResult(converted);
        },
    };
    return { onExecute: () => afterExecute };
}
//# sourceMappingURL=use-step-up.js.map