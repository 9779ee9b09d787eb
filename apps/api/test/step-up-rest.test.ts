import { describe, expect, it } from 'vitest';
import { callRest, STEPPED_UP } from './support/demo.js';
import { challengeOf } from './support/service.js';
import { PHR, CHALLENGE_PHR, service, demo, ottToken, idOf, legalHoldOf, useStepUpService } from './support/step-up-suite.js';

// spec Multi-factor rules 6 / RFC 9470. Step-up over REST: POST /api/documents/:id/legal-hold answers like setLegalHold, with the RFC 9470 parameters in
// its body.

useStepUpService();

describe('spec Multi-factor rules 6 / RFC 9470 on REST: POST /api/documents/:id/legal-hold', () => {
  const hold = async (token: string | undefined, title: string, body: unknown = { legalHold: true }) =>
    callRest(service, 'POST', `/api/documents/${idOf(title)}/legal-hold`, { token, body });

  it('a one-factor token: 401, the challenge, and the RFC 9470 parameters in the body; nothing written', async () => {
    const res = await hold(await ottToken('alice'), 'Quarterly plan');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(challengeOf(service, CHALLENGE_PHR));
    expect(res.json).toEqual({
      statusCode: 401,
      message: 'A different authentication level is required.',
      error: 'Unauthorized',
      code: 'INSUFFICIENT_USER_AUTHENTICATION',
      acr_values: PHR,
    });
    expect(await legalHoldOf('Quarterly plan')).toBe(false);
  });

  it('a passkey sign-in: 200 with the document; guests 401 Bearer, VIEWERs and EDITORs 403, another tenant 404 (after stepping up)', async () => {
    const done = await hold(await demo.token('alice', STEPPED_UP), 'Quarterly plan');
    expect(done.status, done.text).toBe(200);
    expect(done.json).toMatchObject({ id: idOf('Quarterly plan'), legalHold: true, viewerCan: { setLegalHold: true, delete: false } });
    expect(await legalHoldOf('Quarterly plan')).toBe(true);

    const guest = await hold(undefined, 'Draft roadmap');
    expect(guest.status).toBe(401);
    expect(guest.headers.get('www-authenticate')).toBe(challengeOf(service, 'Bearer'));
    for (const persona of ['bob', 'erin'] as const) {
      const denied = await hold(await ottToken(persona), 'Draft roadmap');
      expect(denied.status).toBe(403);
      expect(denied.headers.get('www-authenticate')).toBeNull();
      expect(denied.json).toEqual({ statusCode: 403, message: 'You are not allowed to do this.', error: 'Forbidden' });
    }
    expect((await hold(await ottToken('carol'), 'Draft roadmap')).status).toBe(401);
    expect((await hold(await demo.token('carol', STEPPED_UP), 'Draft roadmap')).status).toBe(404);
    expect(await legalHoldOf('Draft roadmap')).toBe(false);
  });

  it('the body must be { legalHold: true | false }', async () => {
    const token = await demo.token('alice', STEPPED_UP);
    for (const body of [{}, { legalHold: 'yes' }, { legalHold: true, title: 'x' }, [true]]) {
      const res = await hold(token, 'Quarterly plan', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.code).toBe('BAD_USER_INPUT');
    }
    const lifted = await hold(token, 'Litigation memo', { legalHold: false });
    expect(lifted.json).toMatchObject({ legalHold: false, viewerCan: { delete: true } });
  });
});
