import { describe, expect, it } from 'vitest';
import { FactorRuleError, KeyMaterialError, OutboxRefusedError, PasskeyError, UpstreamError, WebhookDeliveryError } from '../index.js';
import { CodedError, definedErrors } from './index.js';

const SAMPLE_ERRORS = {
  SAMPLE_PLAIN: 'A fixed message.',
  SAMPLE_TEMPLATED: ({ what }: { what: string }) => `${what} was refused`,
} as const;

class SampleError extends definedErrors('SampleError', SAMPLE_ERRORS) {}

describe('coded errors', () => {
  it('carry the code, the message fixed for it and the class name, and are instances of their class and CodedError', () => {
    const plain = new SampleError('SAMPLE_PLAIN');
    expect(plain).toBeInstanceOf(SampleError);
    expect(plain).toBeInstanceOf(CodedError);
    expect(plain).toBeInstanceOf(Error);
    expect(plain).toMatchObject({ name: 'SampleError', code: 'SAMPLE_PLAIN', message: 'A fixed message.' });
    expect(String(plain)).toBe('SampleError: A fixed message.');
    expect(plain.cause).toBeUndefined();
  });

  it('build a templated message from the details and keep a cause', () => {
    const cause = new Error('underneath');
    const templated = new SampleError('SAMPLE_TEMPLATED', { what: 'the key' }, { cause });
    expect(templated).toMatchObject({ code: 'SAMPLE_TEMPLATED', message: 'the key was refused', cause });
  });

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
