import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/**
 * Answers per field selection: a compiled query (graphql-jit) hands every execution the same `fieldNodes`, so a
 * page's resolver walks its selection once per document, not once per request. The answer depends on nothing
 * else: fragments are the same document's.
 */
const answered = new WeakMap<readonly object[], Map<readonly string[], boolean>>();

/**
 * Whether the resolving field's selection asks for the field at `path` below it (e.g. `edges.node.owner`), through
 * aliases, fragments and inline fragments. `@skip`/`@include` are not evaluated: a field they may drop counts as
 * asked, so a caller reads at most a little more than the answer needs, never less.
 */
export function selectsPath(info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>, path: readonly string[]): boolean {
  let byPath = answered.get(info.fieldNodes);
  const known = byPath?.get(path);
  if (known !== undefined) return known;
  const selects = walkSelection(info, path);
  if (!byPath) answered.set(info.fieldNodes, (byPath = new Map()));
  byPath.set(path, selects);
  return selects;
}

function walkSelection(info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>, path: readonly string[]): boolean {
  let level: SelectionSetNode[] = info.fieldNodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
  for (const [depth, name] of path.entries()) {
    const next: SelectionSetNode[] = [];
    const visit = (set: SelectionSetNode): boolean => {
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          if (selection.name.value !== name) continue;
          if (depth === path.length - 1) return true;
          if (selection.selectionSet) next.push(selection.selectionSet);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          if (visit(selection.selectionSet)) return true;
        } else {
          const fragment = info.fragments[selection.name.value];
          if (fragment && visit(fragment.selectionSet)) return true;
        }
      }
      return false;
    };
    for (const set of level) if (visit(set)) return true;
    level = next;
  }
  return false;
}
