import { GraphQLError, Kind, parse, } from 'graphql';
import { queryTooComplex } from '../errors.js';
function depthOf(selectionSet, fragments, seen) {
    let deepest = 0;
    for (const selection of selectionSet.selections) {
        let depth = 0;
        if (selection.kind === Kind.FIELD) {
            if (selection.name.value === '__typename')
                continue;
            depth = selection.selectionSet ? 1 + depthOf(selection.selectionSet, fragments, seen) : 1;
        }
        else if (selection.kind === Kind.INLINE_FRAGMENT) {
            depth = depthOf(selection.selectionSet, fragments, seen);
        }
        else {
            const name = selection.name.value;
            const fragment = fragments(name);
            // A fragment cycle is reported by the standard NoFragmentCycles rule; do not recurse into it.
            if (!fragment || seen.has(name))
                continue;
            seen.add(name);
            depth = depthOf(fragment.selectionSet, fragments, seen);
            seen.delete(name);
        }
        if (depth > deepest)
            deepest = depth;
    }
    return deepest;
}
function maxDepthRule(limit) {
    return function MaxDepthRule(context) {
        return {
            OperationDefinition(node) {
                const depth = depthOf(node.selectionSet, (name) => context.getFragment(name), new Set());
                if (depth > limit) {
                    context.reportError(queryTooComplex(`Query depth ${depth} exceeds the limit of ${limit}.`, [node]));
                }
            },
        };
    };
}
function maxAliasesRule(limit) {
    return named('MaxAliasesRule', (context) => {
        let aliases = 0;
        return {
            Field(node) {
                if (node.alias)
                    aliases++;
            },
            Document: {
                leave(node) {
                    if (aliases > limit) {
                        context.reportError(queryTooComplex(`Query has ${aliases} aliases, more than the limit of ${limit}.`, [node]));
                    }
                },
            },
        };
    });
}
function maxDirectivesRule(limit) {
    return named('MaxDirectivesRule', (context) => {
        let directives = 0;
        return {
            Directive() {
                directives++;
            },
            Document: {
                leave(node) {
                    if (directives > limit) {
                        context.reportError(queryTooComplex(`Query has ${directives} directives, more than the limit of ${limit}.`, [node]));
                    }
                },
            },
        };
    });
}
// graphql 16 spells it "more that N tokens"; accept the corrected wording too.
const TOKEN_LIMIT_MESSAGE = /Document contains more tha[nt] \d+ tokens/;
/**
 * Depth, alias, token and directive limits. They depend on the document only, so they run inside
 * validation (and parsing, for tokens) and share Yoga's parse and validation caches.
 */
export function useQueryLimits(options) {
    const rules = queryLimitRules(options);
    const parseWithTokenLimit = (source, parseOptions) => {
        try {
            return parse(source, { ...parseOptions, maxTokens: options.maxTokens });
        }
        catch (error) {
            if (error instanceof GraphQLError && TOKEN_LIMIT_MESSAGE.test(error.message)) {
                throw queryTooComplex(`Query has more than ${options.maxTokens} tokens.`);
            }
            throw error;
        }
    };
    return {
        onParse({ setParseFn }) {
            setParseFn(parseWithTokenLimit);
        },
        onValidate({ addValidationRule }) {
            for (const rule of rules)
                addValidationRule(rule);
        },
    };
}
/** The document-only limits as validation rules (also applied to allowlists before they are imported). */
export function queryLimitRules(options) {
    return [maxDepthRule(options.maxDepth), maxAliasesRule(options.maxAliases), maxDirectivesRule(options.maxDirectives)];
}
/** The validation cache keys on rule names: every rule needs a stable, distinct one. */
function named(name, fn) {
    Object.defineProperty(fn, 'name', { value: name });
    return fn;
}
//# sourceMappingURL=use-query-limits.js.map