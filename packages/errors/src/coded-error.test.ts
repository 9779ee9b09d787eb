import { describe, expect, it } from 'vitest';
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
});
