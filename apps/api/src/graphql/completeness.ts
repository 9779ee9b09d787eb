import { isObjectType, type GraphQLSchema } from 'graphql';
import type { Resolvers, ResolversParentTypes } from '../generated/resolvers.js';

// Every field of the schema is served either by a resolver or by the default resolver reading the mapped
// model's property of the same name. The generated resolver types make every resolver optional, so a field
// nobody serves would pass the compiler and fail at run time ("Cannot return null for non-nullable field").
// The types below name those fields; `pnpm codegen` evaluates ModelServedField with the TypeScript checker into
// src/generated/model-served.ts, so start-up checks the same list (see checkResolverCompleteness).

type Maps = Required<Resolvers>;

/** The object types: a resolver map per field (scalars are GraphQLScalarType objects, abstract types resolve a type). */
type ObjectTypeName = {
  [T in keyof Maps]: Maps[T] extends { serialize: unknown } ? never : '__resolveType' extends keyof Maps[T] ? never : T;
}[keyof Maps] &
  keyof ResolversParentTypes &
  string;

type FieldName<T extends ObjectTypeName> = Exclude<keyof Maps[T], `__${string}`> & string;

/** What a field's resolver must produce: the generated Resolver<TResult, ...> is a function or `{ resolve }`. */
type OutputOf<R> = R extends (...args: never[]) => infer Out
  ? Awaited<Out>
  : R extends { resolve: (...args: never[]) => infer Out }
    ? Awaited<Out>
    : never;

/** What a field accepts: graphql-js reads `undefined` as null, so a nullable field also takes a missing property. */
type Accepts<Out> = null extends Out ? Out | undefined : Out;

/** A property's value as read: an optional one may be missing (stated here: a generic index can drop it). */
// biome-ignore lint/complexity/noBannedTypes: `{} extends Pick<T, K>` is the type-level test for an optional property
type PropertyOf<Parent, F extends keyof Parent> = ({} extends Pick<Parent, F> ? undefined : never) | Parent[F];

/** The model's property of the field's name fits the field's type (a nullable column behind a Non-Null field does not). */
type ModelServes<T extends ObjectTypeName, F extends FieldName<T>> = F extends keyof ResolversParentTypes[T]
  ? [ResolversParentTypes[T][F]] extends [never] // the root types' (and Status's) `Record<PropertyKey, never>`
    ? false
    : [PropertyOf<ResolversParentTypes[T], F>] extends [Accepts<OutputOf<NonNullable<Maps[T][F]>>>]
      ? true
      : false
  : false;

/** `Type.field` for every field the mapped model serves by itself (the default resolver suffices). */
export type ModelServedField = {
  [T in ObjectTypeName]: { [F in FieldName<T>]: ModelServes<T, F> extends true ? `${T}.${F}` : never }[FieldName<T>];
}[ObjectTypeName];

type Implemented<Impl, T> = T extends keyof Impl ? keyof NonNullable<Impl[T]> : never;

/** `Type.field` for every field with neither a resolver in `Impl` nor a fitting model property. */
export type ResolverGaps<Impl> = {
  [T in ObjectTypeName]: {
    [F in FieldName<T>]: F extends Implemented<Impl, T> ? never : `${T}.${F}` extends ModelServedField ? never : `${T}.${F}`;
  }[FieldName<T>];
}[ObjectTypeName];

/**
 * Assign `'complete'` to it: typecheck then fails naming each gap in a sentence of its own, e.g.
 * `Type '"complete"' is not assignable to type '"Organization.memberCount: no resolver and no fitting model property"'`.
 */
export type CompletenessCheck<Impl> = [ResolverGaps<Impl>] extends [never]
  ? 'complete'
  : `${ResolverGaps<Impl>}: no resolver and no fitting model property`;

/**
 * The same rule at start-up, for a build made without typecheck: every field of every object type of the
 * schema has a resolver in `resolvers` (a subscription field its `subscribe`) or is one the model serves
 * (`modelServed`: the list `pnpm codegen` wrote). Returns the gaps as `Type.field`, empty when there are none.
 */
export function resolverGaps(schema: GraphQLSchema, resolvers: readonly object[], modelServed: readonly string[]): string[] {
  const served = new Set<string>(modelServed);
  const gaps: string[] = [];
  const subscriptionType = schema.getSubscriptionType()?.name;
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.keys(type.getFields())) {
      const implemented = resolvers.some((map) => {
        const entry = (map as Record<string, Record<string, unknown> | undefined>)[type.name]?.[field];
        if (type.name === subscriptionType) return typeof (entry as { subscribe?: unknown } | undefined)?.subscribe === 'function';
        return typeof entry === 'function' || typeof (entry as { resolve?: unknown } | undefined)?.resolve === 'function';
      });
      if (!implemented && !served.has(`${type.name}.${field}`)) gaps.push(`${type.name}.${field}`);
    }
  }
  return gaps;
}
