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

import { sql } from 'drizzle-orm';
import { documents } from '@latchkey/db';
import { eq } from 'drizzle-orm';
it('explore', async () => {
  const alice = await demo.token('alice');
  const bob = await demo.token('bob');
  const g = async (label: string, query: string, variables?: unknown, accept?: string, token = alice) => {
    const r = await postGraphQL(service.graphqlUrl, { query, variables }, { token, accept });
    console.log(label, r.status, r.headers.get('content-type'), JSON.stringify(r.json).slice(0, 1500));
  };
  const M = 'mutation Create($input: CreateDocumentInput!) { createDocument(input: $input) { document { title } userErrors { field code message } } }';
  await g('bobcreate', M, { input: { organization: 'acme', title: 'zz' } }, undefined, bob);
  await g('bobcreatejson', M, { input: { organization: 'acme', title: 'zz' } }, 'application/json', bob);
  await g('globex', M, { input: { organization: 'globex', title: 'zz' } });
  const id = demo.documentId.get('Draft roadmap')!;
  const [{ ownerId }] = await service.database.db.select({ ownerId: documents.ownerId }).from(documents).where(eq(documents.id, id));
  await service.database.db.transaction(async (tx) => {
    await tx.execute(sql`set local session_replication_role = replica`);
    await tx.update(documents).set({ ownerId: randomUUID(), updatedAt: sql`${documents.updatedAt}` }).where(eq(documents.id, id));
  });
  await g('orphanlist', '{ status { service } documents { edges { node { title owner { id } } } } }');
  await g('orphanlistjson', '{ status { service } documents { edges { node { title owner { id } } } } }', undefined, 'application/json');
  await g('orphanone', `{ document(id: "${id}") { title owner { id } } }`);
  await g('orphanme', `{ me { memberships { role } } }`);
  await service.database.db.transaction(async (tx) => {
    await tx.execute(sql`set local session_replication_role = replica`);
    await tx.update(documents).set({ ownerId, updatedAt: sql`${documents.updatedAt}` }).where(eq(documents.id, id));
  });
  console.log(service.logs.filter((l) => l.level >= 40).map((l) => JSON.stringify(l).slice(0, 400)));
});
