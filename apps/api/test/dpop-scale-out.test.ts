import { onPostgres } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dpopKey } from './support/dpop.js';
import { startServiceProcesses, type ServiceProcesses } from './support/processes.js';
import { signInThroughDemo } from './support/sessions.js';

describe.runIf(onPostgres('the PostgreSQL-only tests'))('a DPoP proof is accepted once by all instances together', () => {
  let processes: ServiceProcesses;

  beforeAll(async () => {
    processes = await startServiceProcesses(2, {}, { publicUrlOnFirst: true });
  }, 60_000);
  afterAll(() => processes?.stop());

  it('a proof used at one instance is refused at the other as a replay (invalid_dpop_proof); a fresh one works there', async () => {
    const base = processes.publicUrl;
    const key = await dpopKey();
    const { accessToken } = await signInThroughDemo(base, processes.dataDir, 'alice@acme.test', {
      tokenRequestProof: () => key.proof({ htm: 'POST', htu: `${base}/oidc/token` }),
    });
    // htu is PUBLIC_URL + path, whichever instance the request reaches.
    const proof = () => key.proof({ htm: 'POST', htu: `${base}/graphql`, accessToken });
    const viewer = (url: string, dpop: string) =>
      fetch(`${url}/graphql`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json',
          authorization: `DPoP ${accessToken}`,
          dpop,
        },
        body: JSON.stringify({ query: '{ viewer { subject } }' }),
      });
    const once = await proof();
    expect((await viewer(processes.urls[0]!, once)).status).toBe(200);
    const replayed = await viewer(processes.urls[1]!, once);
    expect(replayed.status).toBe(401);
    expect(replayed.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_dpop_proof"/);
    expect((await viewer(processes.urls[1]!, await proof())).status).toBe(200);
  });
});
