import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';

// graphql-http's conformance audits, run against the real server with every plugin on.
// Every MUST, SHOULD and MAY audit must come back ok; a warning fails the test like an error.
describe('GraphQL-over-HTTP conformance (graphql-http serverAudits)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service?.stop());

  const audits = serverAudits({ url: () => service.graphqlUrl });
  it('runs the full audit list', () => {
    expect(audits.length).toBeGreaterThanOrEqual(61);
  });
  for (const audit of audits) {
    it(`${audit.id} ${audit.name}`, async () => {
      const result = await audit.fn();
      expect(result.status === 'ok' ? 'ok' : `${result.status}: ${result.reason}`).toBe('ok');
    });
  }
});
