import { Kind, parse, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { selectsPath } from './selection.js';

/** What a resolver of the operation's first root field would see of its selection. */
function infoOf(document: string) {
  const parsed = parse(document);
  const operation = parsed.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const root = operation.selectionSet.selections[0]!;
  if (root.kind !== Kind.FIELD) throw new Error('the first root selection must be a field');
  const fragments = Object.fromEntries(
    parsed.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  return { fieldNodes: [root], fragments };
}

const OWNER = ['edges', 'node', 'owner'];

describe('selectsPath: whether a page must read what its selection shows', () => {
  it('finds a nested field written out, under an alias too', () => {
    expect(selectsPath(infoOf('{ documents { edges { node { owner { email } } } } }'), OWNER)).toBe(true);
    expect(selectsPath(infoOf('{ documents { edges { item: node { who: owner { email } } } } }'), OWNER)).toBe(true);
  });

  it('finds it through named and inline fragments at any level', () => {
    const named =
      'query { documents { ...Page } } fragment Page on DocumentConnection { edges { node { ...Doc } } } fragment Doc on Document { owner { id } }';
    expect(selectsPath(infoOf(named), OWNER)).toBe(true);
    expect(selectsPath(infoOf('{ documents { edges { ... on DocumentEdge { node { ... { owner { id } } } } } } }'), OWNER)).toBe(true);
  });

  it('is false when the field is absent, or present at another depth', () => {
    expect(selectsPath(infoOf('{ documents { edges { node { id title } } } }'), OWNER)).toBe(false);
    expect(selectsPath(infoOf('{ documents { owner { id } edges { cursor } } }'), OWNER)).toBe(false);
    expect(selectsPath(infoOf('query { documents { ...Missing } }'), OWNER)).toBe(false);
  });

  it('counts a field under @skip/@include as asked (reading a little more is safe, less is not)', () => {
    expect(selectsPath(infoOf('query ($no: Boolean!) { documents { edges { node { owner @include(if: $no) { id } } } } }'), OWNER)).toBe(
      true,
    );
  });
});
