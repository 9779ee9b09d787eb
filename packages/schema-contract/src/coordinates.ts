import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DefinitionNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';

/** A deprecated schema coordinate an operation uses, and why it is deprecated. */
export interface Deprecation {
  /** `Type.field`, `Type.field.argument`, `Input.field` or `Enum.VALUE` */
  readonly coordinate: string;
  readonly reason: string;
}

/** What one operation uses of a schema. */
export interface OperationUsage {
  /**
   * Every schema coordinate the operation names: each type it touches (`Type`), field (`Type.field`), argument it
   * passes (`Type.field.argument`), input field it writes as a literal (`Input.field`) and enum value it writes as a
   * literal (`Enum.VALUE`). Meta fields (`__typename`, `__schema`) are left out.
   */
  readonly coordinates: ReadonlySet<string>;
  /** The deprecated ones, in the order the operation first names them. */
  readonly deprecated: readonly Deprecation[];
}

const EMPTY: OperationUsage = Object.freeze({ coordinates: new Set<string>(), deprecated: Object.freeze([]) });

const isFragment = (definition: DefinitionNode): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION;

/** The operation `operationName` picks (or the only one), with the fragments it spreads, directly or not. */
function operationWithFragments(document: DocumentNode, operationName?: string | null): DefinitionNode[] | undefined {
  const operations = document.definitions.filter(
    (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operationName
    ? operations.find((candidate) => candidate.name?.value === operationName)
    : operations.length === 1
      ? operations[0]
      : undefined;
  if (!operation) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const reached: DefinitionNode[] = [operation];
  const seen = new Set<string>();
  for (let index = 0; index < reached.length; index += 1) {
    visit(reached[index]!, {
      FragmentSpread(spread) {
        const fragment = fragments.get(spread.name.value);
        if (fragment && !seen.has(spread.name.value)) {
          seen.add(spread.name.value);
          reached.push(fragment);
        }
      },
    });
  }
  return reached;
}

/**
 * What an operation of `document` uses of `schema` (the operation `operationName` names, or the only one). A name
 * the schema does not have is skipped: the document is judged as far as it still fits (a document that does not
 * validate is reported by validation, not here). Values given by variables are not seen: only what the document
 * itself writes.
 */
export function operationUsage(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): OperationUsage {
  const definitions = operationWithFragments(document, operationName);
  if (!definitions) return EMPTY;
  const coordinates = new Set<string>();
  const deprecated: Deprecation[] = [];
  const use = (coordinate: string, deprecationReason?: string | null) => {
    if (coordinates.has(coordinate)) return;
    coordinates.add(coordinate);
    if (deprecationReason != null) deprecated.push({ coordinate, reason: deprecationReason });
  };
  const typeInfo = new TypeInfo(schema);
  visit(
    { kind: Kind.DOCUMENT, definitions },
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        const parent = typeInfo.getParentType();
        const field = typeInfo.getFieldDef();
        if (!parent || !field || node.name.value.startsWith('__')) return;
        use(`${parent.name}.${field.name}`, field.deprecationReason);
        use(getNamedType(field.type).name);
      },
      Argument() {
        // A directive's argument (`@include(if:)`) is not the field's.
        if (typeInfo.getDirective()) return;
        const parent = typeInfo.getParentType();
        const field = typeInfo.getFieldDef();
        const argument = typeInfo.getArgument();
        if (!parent || !field || !argument) return;
        use(`${parent.name}.${field.name}.${argument.name}`, argument.deprecationReason);
        use(getNamedType(argument.type).name);
      },
      ObjectField(node) {
        const input = getNamedType(typeInfo.getParentInputType());
        if (!isInputObjectType(input)) return;
        const field = input.getFields()[node.name.value];
        if (!field) return;
        use(`${input.name}.${field.name}`, field.deprecationReason);
        use(getNamedType(field.type).name);
      },
      EnumValue(node) {
        const type = getNamedType(typeInfo.getInputType());
        if (!isEnumType(type)) return;
        const value = type.getValue(node.value);
        if (value) use(`${type.name}.${value.name}`, value.deprecationReason);
      },
      VariableDefinition() {
        const type = typeInfo.getInputType();
        if (type) use(getNamedType(type).name);
      },
      InlineFragment() {
        const type = typeInfo.getType();
        if (type) use(getNamedType(type).name);
      },
      FragmentDefinition() {
        const type = typeInfo.getType();
        if (type) use(getNamedType(type).name);
      },
    }),
  );
  return { coordinates, deprecated };
}

/** Each operation of a document as a document of its own: the operation and the fragments it spreads. */
export function splitOperations(document: DocumentNode): { name: string | null; document: DocumentNode }[] {
  return document.definitions.flatMap((definition) => {
    if (definition.kind !== Kind.OPERATION_DEFINITION) return [];
    const name = definition.name?.value ?? null;
    const definitions = operationWithFragments({
      kind: Kind.DOCUMENT,
      definitions: [definition, ...document.definitions.filter(isFragment)],
    });
    return definitions ? [{ name, document: { kind: Kind.DOCUMENT, definitions } }] : [];
  });
}
