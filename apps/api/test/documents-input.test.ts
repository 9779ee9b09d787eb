import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, it } from 'vitest';
import { reseed, demoOf, callRest, type Demo } from './support/demo.js';
import { postGraphQL, startTestService, type TestService } from './support/service.js';

let service: TestService;
let demo: Demo;
beforeAll(async () => {
  service = await startTestService({ MAX_BODY_BYTES: '300000' });
  await reseed(service.database);
  demo = await demoOf(service);
});
afterAll(() => service?.stop());

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

it('explore', async () => {
  const alice = await demo.token('alice');
  const g = async (label: string, query: string, variables?: unknown, accept?: string) => {
    const r = await postGraphQL(service.graphqlUrl, { query, variables }, { token: alice, accept });
    console.log(label, r.status, r.headers.get('content-type'), JSON.stringify(r.json));
  };
  await g('id42', '{ document(id: "42") { title } }');
  await g('idempty', '{ document(id: "") { title } }');
  await g('upd', 'mutation { updateDocument(input: {id: "42", title: "x"}) { document { id } } }');
  await g('del', 'mutation { deleteDocument(id: "nope") { deletedDocumentId } }');
  await g('pub', 'mutation { publishDocument(id: "nope") { document { id } } }');
  await g('cursor', '{ documents(after: "garbage") { edges { cursor } } }');
  await g('cursor2', `{ documents(after: "${b64({ a: 1 })}") { edges { cursor } } }`);
  await g('cursor3', `{ documents(after: "${b64(['not-a-date', randomUUID()])}") { edges { cursor } } }`);
  await g('cursor4', `{ documents(after: "${b64(['2024-01-01 00:00:00+00', 'zzz'])}") { edges { cursor } } }`);
  await g('first101', '{ documents(first: 101) { edges { cursor } } }');
  await g('first-1', '{ documents(first: -1) { edges { cursor } } }');
  await g('firstbig', '{ documents(first: 2147483648) { edges { cursor } } }');
  await g('firstbigvar', 'query ($f: Int) { documents(first: $f) { edges { cursor } } }', { f: 2147483648 });
  await g('firstbigvarjson', 'query ($f: Int) { documents(first: $f) { edges { cursor } } }', { f: 2147483648 }, 'application/json');
  await g('enum', '{ documents(filter: {status: [DELETED]}) { edges { cursor } } }');
  await g('enumvar', 'query ($s: [DocumentStatus!]) { documents(filter: {status: $s}) { edges { cursor } } }', { s: ['DELETED'] });
  await g('god', `mutation { changeMemberRole(input: {organization: "acme", userId: "${demo.userId.bob}", role: GOD}) { membership { role } } }`);
  await g('godvar', `mutation ($r: Role!) { changeMemberRole(input: {organization: "acme", userId: "${demo.userId.bob}", role: $r}) { membership { role } } }`, { r: 'GOD' });
  await g('title201', 'mutation ($t: String!) { createDocument(input: {organization: "acme", title: $t}) { document { id } userErrors { code } } }', { t: 'x'.repeat(201) });
  await g('nul', 'mutation ($t: String!) { createDocument(input: {organization: "acme", title: $t}) { document { id } userErrors { code } } }', { t: 'a\u0000b' });
  await g('slug', 'mutation { createDocument(input: {organization: "ACME!", title: "t"}) { document { id } } }');
  await g('slugfilter', '{ documents(filter: {organization: "Not A Slug"}) { edges { cursor } } }');
  await g('embargo', 'mutation ($e: DateTime) { createDocument(input: {organization: "acme", title: "t", embargoUntil: $e}) { document { id } } }', { e: 'not-a-date' });
  await g('embargojson', 'mutation ($e: DateTime) { createDocument(input: {organization: "acme", title: "t", embargoUntil: $e}) { document { id } } }', { e: 'not-a-date' }, 'application/json');
  await g('embargolit', 'mutation { createDocument(input: {organization: "acme", title: "t", embargoUntil: "not-a-date"}) { document { id } } }');
});
