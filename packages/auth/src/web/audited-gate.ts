import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AttemptLimits, LimitGate, TooMany } from '@latchkey/http';
import type { AuditTrail } from '../audit/index.js';
import type { Factor } from '../factors/index.js';
import type { SignInLimits } from '../rate-limit/index.js';

/**
 * The sign-in routes' gate, telling the audit trail what it sees: every wrong credential is a `sign_in.failed`
 * event of the method whose limits the route took (with the account, when the route knows it), and the failure
 * that locks the source out is a `lockout` event too. Each method's limits are an object of their own, so the
 * gate knows the method from the limits a route hands it.
 */
export function createAuditedGate(gate: LimitGate, audit: AuditTrail, limits: (method: Factor) => SignInLimits) {
  const methods = new WeakMap<AttemptLimits, Factor>();
  const byMethod = new Map<Factor, SignInLimits>();

  /** The limits of one method's routes (one object per method, made once). */
  function limitsOf(method: Factor): SignInLimits {
    let bound = byMethod.get(method);
    if (!bound) {
      bound = { ...limits(method) };
      byMethod.set(method, bound);
      methods.set(bound, method);
    }
    return bound;
  }

  async function attempt(req: IncomingMessage, res: ServerResponse, attemptLimits: AttemptLimits, tooMany: TooMany) {
    const admitted = await gate.attempt(req, res, attemptLimits, tooMany);
    if (!admitted) return undefined;
    const method = methods.get(attemptLimits);
    return {
      ...admitted,
      /** a wrong credential; `subject`: the account it was for, when the route knows it */
      async failed(subject?: string): Promise<unknown> {
        const outcome = await admitted.failed();
        if (method) {
          audit.record({ type: 'sign_in.failed', details: { method }, subject: subject ?? null, request: req });
          if (outcome === 'locked-out') audit.record({ type: 'lockout', details: { method }, subject: subject ?? null, request: req });
        }
        return outcome;
      },
    };
  }

  return { gate: { ...gate, attempt }, limitsOf };
}

export type AuditedGate = ReturnType<typeof createAuditedGate>['gate'];
