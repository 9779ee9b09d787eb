import { describe, expect, it } from 'vitest';
import { FactorRuleError, KeyMaterialError, OutboxRefusedError, PasskeyError, UpstreamError, WebhookDeliveryError } from './index.js';

describe('coded errors', () => {
  it('give every error class of the package a stable code', () => {
    expect(new OutboxRefusedError()).toMatchObject({ name: 'OutboxRefusedError', code: 'DEV_OUTBOX_IN_PRODUCTION' });
    expect(new WebhookDeliveryError(502)).toMatchObject({
      name: 'WebhookDeliveryError',
      code: 'WEBHOOK_DELIVERY_FAILED',
      status: 502,
      message: 'the delivery webhook answered 502',
    });
    expect(new FactorRuleError('FACTOR_RULE_DUPLICATE', { rule: 'admins' }).message).toBe('multi-factor rule "admins" is defined twice');
    expect(new KeyMaterialError('SIGNING_KEY_MISSING')).toMatchObject({ name: 'KeyMaterialError', code: 'SIGNING_KEY_MISSING' });
    expect(new PasskeyError('PASSKEY_LABEL_INVALID')).toMatchObject({ name: 'PasskeyError', code: 'PASSKEY_LABEL_INVALID' });
    const upstream = new UpstreamError('UPSTREAM_DENIED', { upstreamError: 'access_denied' });
    expect(upstream).toMatchObject({ name: 'UpstreamError', code: 'UPSTREAM_DENIED', upstreamError: 'access_denied' });
    expect('cause' in upstream).toBe(false);
  });
});
