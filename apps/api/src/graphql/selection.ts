import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/**
 * Whether the resolving field's selection asks for the field at `path` below it (e.g. `edges.node.owner`), through
 * aliases, fragments and inline fragments. `@skip`/`@include` are not evaluated: a field they may drop counts as
 * asked, so a caller reads at most a little more than the answer needs, never less.
 */
export function selectsPath(info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>, path: readonly string[]): boolean {
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
