import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from './document-id.js';
import { checkManifestAgainstSchema, ManifestError, parseManifest } from './manifest.js';

const query = 'query Status { status { version } }';
const hash = sha256Hex(query);

describe('persisted-documents manifests (the allowlist the client codegen writes)', () => {
  it("reads the client preset form (sha256: ids, or bare hex) and Apollo's manifest", () => {
    expect(parseManifest(JSON.stringify({ [`sha256:${hash}`]: query }))).toEqual([{ hash, query }]);
    expect(parseManifest(JSON.stringify({ [hash.toUpperCase()]: query }))).toEqual([{ hash, query }]);
    const apollo = {
      format: 'apollo-persisted-query-manifest',
      version: 1,
      operations: [{ id: hash, name: 'Status', type: 'query', body: query }],
    };
    expect(parseManifest(JSON.stringify(apollo))).toEqual([{ hash, query }]);
  });

  it('refuses an id that is not the digest of its document (no smuggling under another id), naming every bad entry', () => {
    const other = sha256Hex('query Other { status { version } }');
    const error = (() => {
      try {
        parseManifest(JSON.stringify({ [`sha256:${other}`]: query, 'md5:abc': query, [`sha256:${hash}`]: 42 }));
      } catch (caught) {
        return caught as ManifestError;
      }
      throw new Error('expected a ManifestError');
    })();
    expect(error).toBeInstanceOf(ManifestError);
    expect(error.problems).toHaveLength(3);
    expect(error.problems[0]).toContain('is not the SHA-256 of its document');
  });

  it.each([
    ['not json', '{'],
    ['an array', '[]'],
    ['empty', '{}'],
  ])('refuses %s', (_name, text) => {
    expect(() => parseManifest(text)).toThrow(ManifestError);
  });

  it('checks every document against the schema the server runs', () => {
    const schema = buildSchema('type Query { status: Status } type Status { version: String }');
    expect(checkManifestAgainstSchema(schema, [{ hash, query }])).toEqual([]);
    const stale = 'query Old { status { removedField } }';
    expect(checkManifestAgainstSchema(schema, [{ hash: sha256Hex(stale), query: stale }])[0]).toContain(
      'Cannot query field "removedField"',
    );
  });
});
