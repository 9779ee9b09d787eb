// Policies and abilities
export { binding, definePolicy } from './policy.js';
export type { AbilityDefinition, Policy } from './policy.js';

// Decisions
export { authorize, can } from './decide.js';
export type { AuthorizeOptions } from './decide.js';

// Roles
export { createRoleHierarchy } from './roles.js';
export type { RoleHierarchy } from './roles.js';

// Denials and their events
export { AuthorizationDenied, isAuthorizationDenied } from './denial.js';
export { DENIAL_CHANNEL, onDenied } from './events.js';

// Edges: GraphQL
export { convertDenials, denialToGraphQLError, useAuthorizationErrors } from './graphql-errors.js';

// Route and field level from SDL directives
export { applyDirectiveRules, fieldRulesOf, useDirectiveRules } from './directive-rules.js';
export type { DirectiveRulesContext, DirectiveRulesOptions, FieldRule, FieldRuleOptions } from './directive-rules.js';
export { createRouteRules, governingMarks, ruleDirectives } from './route-rules.js';
export type { RouteRequirements, RouteRules, RuleDirectiveNames } from './route-rules.js';
export { useRouteRules } from './use-route-rules.js';
export type { RouteRulesOptions } from './use-route-rules.js';
// Edges: REST
export { denialToHttp } from './http-errors.js';

// Types
export type { Ability, BeforeHook, Check, DenialEvent, DenialReason, Guest, ScopedUser } from './types.js';
