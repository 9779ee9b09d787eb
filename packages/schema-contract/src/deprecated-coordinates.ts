import { isEnumType, isInputObjectType, isInterfaceType, isIntrospectionType, isObjectType, type GraphQLSchema } from 'graphql';
import type { Deprecation } from './coordinates.js';

/** Every deprecated coordinate of a schema (fields, arguments, input fields, enum values) with its reason, sorted. */
export function deprecatedCoordinates(schema: GraphQLSchema): Deprecation[] {
  const found: Deprecation[] = [];
  const add = (coordinate: string, reason: string | null | undefined) => {
    if (reason != null) found.push({ coordinate, reason });
  };
  for (const type of Object.values(schema.getTypeMap())) {
    if (isIntrospectionType(type)) continue;
    if (isObjectType(type) || isInterfaceType(type))
      for (const field of Object.values(type.getFields())) {
        add(`${type.name}.${field.name}`, field.deprecationReason);
        for (const argument of field.args) add(`${type.name}.${field.name}.${argument.name}`, argument.deprecationReason);
      }
    if (isInputObjectType(type))
      for (const field of Object.values(type.getFields())) add(`${type.name}.${field.name}`, field.deprecationReason);
    if (isEnumType(type)) for (const value of type.getValues()) add(`${type.name}.${value.name}`, value.deprecationReason);
  }
  return found.sort((a, b) => a.coordinate.localeCompare(b.coordinate));
}
