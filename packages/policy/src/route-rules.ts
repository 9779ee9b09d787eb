import {
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type ConstDirectiveNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';

/** The SDL directives the rules read. */
export interface RuleDirectiveNames {
  /** @default 'public' */
  publicDirective?: string;
  /** @default 'auth' */
  authDirective?: string;
  /** @default 'can' */
  canDirective?: string;
  /** @default 'scope' */
  scopeDirective?: string;
}

type Marked = { readonly directives?: readonly ConstDirectiveNode[] } | null | undefined;

/** The directive names, resolved once: public, auth, can. */
export function ruleDirectives(names: RuleDirectiveNames = {}) {
  return {
    public: names.publicDirective ?? 'public',
    auth: names.authDirective ?? 'auth',
    can: names.canDirective ?? 'can',
    scope: names.scopeDirective ?? 'scope',
  };
}

/**
 * The access marks (`@public`, `@auth`, `@can`) that govern a field (spec Authorization 1): its own marks when it
 * has any, otherwise its type's. So `@public` on a field clears its type's `@auth`, and a marked field on a
 * `@public` type is not public. The one place the marks are read.
 */
export function governingMarks(
  type: GraphQLNamedType,
  field: Pick<GraphQLField<unknown, unknown>, 'astNode'>,
  names: ReturnType<typeof ruleDirectives>,
): ConstDirectiveNode[] {
  const known = (node: Marked) =>
    node?.directives?.filter((d) => d.name.value === names.public || d.name.value === names.auth || d.name.value === names.can) ?? [];
  const own = known(field.astNode);
  return own.length > 0 ? own : [type.astNode, ...(type.extensionASTNodes ?? [])].flatMap((node) => known(node as Marked));
}

/** Every `Type.field` a guest may select: the fields governed by `@public`. */
function publicFields(schema: GraphQLSchema, names: ReturnType<typeof ruleDirectives>): Set<string> {
  const fields = new Set<string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || !('getFields' in type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (!('astNode' in field)) continue;
      if (governingMarks(type, field, names).some((mark) => mark.name.value === names.public)) fields.add(`${type.name}.${field.name}`);
    }
  }
  return fields;
}

/**
 * The scope `Type.field` needs (`@scope(name:)`): the field's own mark, else its type's; undefined when neither has one.
 */
function scopeMark(type: GraphQLNamedType, field: Pick<GraphQLField<unknown, unknown>, 'astNode'>, directive: string): string | undefined {
  const nameOf = (node: Marked) => {
    const mark = node?.directives?.find((d) => d.name.value === directive);
    const argument = mark?.arguments?.find((a) => a.name.value === 'name');
    return argument?.value.kind === Kind.STRING ? argument.value.value : undefined;
  };
  return nameOf(field.astNode) ?? [type.astNode, ...(type.extensionASTNodes ?? [])].map((node) => nameOf(node as Marked)).find(Boolean);
}

/** The scope each scoped `Type.field` needs. */
function scopedFields(schema: GraphQLSchema, directive: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || !('getFields' in type)) continue;
    for (const field of Object.values(type.getFields())) {
      const scope = 'astNode' in field ? scopeMark(type, field, directive) : undefined;
      if (scope) fields.set(`${type.name}.${field.name}`, scope);
    }
  }
  return fields;
}

/** What an operation needs before it may run, derived from the document alone (so it is cached per document). */
export interface RouteRequirements {
  /** it selects a field that is not `@public` */
  signIn: boolean;
  /** it selects `__schema` or `__type` */
  introspection: boolean;
  /** the scopes an access token needs for it (`@scope` of every field it selects), sorted; empty: none */
  scopes: readonly string[];
}

export interface RouteRules {
  /** Whether a guest may select `Type.field` (`__typename` always). */
  isPublic: (schema: GraphQLSchema, typeName: string, fieldName: string) => boolean;
  /** What an operation needs, cached per document and operation name. */
  requirementsOf: (schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined) => RouteRequirements;
}

/**
 * The route level (spec Authorization 1, 4, 7), judged from the schema's marks and the document alone: every
 * field requires a signed-in caller unless `@public` governs it. One instance is shared by every check that must
 * agree on what a guest may see (generic-auth's validation, the WebSocket start, public caching).
 */
export function createRouteRules(names: RuleDirectiveNames = {}): RouteRules {
  const directives = ruleDirectives(names);
  const publicBySchema = new WeakMap<GraphQLSchema, Set<string>>();
  const scopedBySchema = new WeakMap<GraphQLSchema, Map<string, string>>();
  const requirementsByDocument = new WeakMap<DocumentNode, Map<string, RouteRequirements>>();

  const publicOf = (schema: GraphQLSchema) => {
    let fields = publicBySchema.get(schema);
    if (!fields) publicBySchema.set(schema, (fields = publicFields(schema, directives)));
    return fields;
  };
  const scopedOf = (schema: GraphQLSchema) => {
    let fields = scopedBySchema.get(schema);
    if (!fields) scopedBySchema.set(schema, (fields = scopedFields(schema, directives.scope)));
    return fields;
  };
  const isPublic: RouteRules['isPublic'] = (schema, typeName, fieldName) =>
    fieldName === '__typename' || publicOf(schema).has(`${typeName}.${fieldName}`);

  function judge(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): RouteRequirements {
    const fragments = new Map<string, FragmentDefinitionNode>();
    let operation: OperationDefinitionNode | undefined;
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
      else if (definition.kind === Kind.OPERATION_DEFINITION && (operationName == null || definition.name?.value === operationName)) {
        operation ??= definition;
      }
    }
    const requirements = { signIn: false, introspection: false };
    const scopes = new Set<string>();
    if (!operation) return { ...requirements, scopes: [] };
    const scoped = scopedOf(schema);
    const typeInfo = new TypeInfo(schema);
    const pending: (OperationDefinitionNode | FragmentDefinitionNode)[] = [operation];
    const visited = new Set<string>();
    const visitor = visitWithTypeInfo(typeInfo, {
      Field(node) {
        const name = node.name.value;
        if (name === '__schema' || name === '__type') {
          requirements.introspection = true;
          return false; // the introspection subtree is judged as a whole by its own setting
        }
        const parent = typeInfo.getParentType();
        if (!parent || !isPublic(schema, parent.name, name)) requirements.signIn = true;
        const scope = parent && scoped.get(`${parent.name}.${name}`);
        if (scope) scopes.add(scope);
        return undefined;
      },
      FragmentSpread(node) {
        const name = node.name.value;
        const fragment = fragments.get(name);
        if (fragment && !visited.has(name)) {
          visited.add(name);
          pending.push(fragment);
        }
      },
    });
    while (pending.length > 0) visit(pending.pop()!, visitor);
    return { ...requirements, scopes: [...scopes].sort() };
  }

  return {
    isPublic,
    requirementsOf(schema, document, operationName) {
      const key = operationName ?? '';
      let byOperation = requirementsByDocument.get(document);
      if (!byOperation) requirementsByDocument.set(document, (byOperation = new Map()));
      let requirements = byOperation.get(key);
      if (!requirements) byOperation.set(key, (requirements = judge(schema, document, operationName)));
      return requirements;
    },
  };
}
