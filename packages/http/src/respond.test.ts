import { describe, expect, it } from 'vitest';
import { httpErrorBody } from './respond.js';

describe('the error body', () => {
  it("names the status's reason as node:http does, for every status (500 included)", () => {
    expect(httpErrorBody(500, 'Internal server error.')).toEqual({
      statusCode: 500,
      message: 'Internal server error.',
      error: 'Internal Server Error',
    });
    expect(httpErrorBody(429, 'Too many.', { code: 'X' })).toEqual({
      statusCode: 429,
      message: 'Too many.',
      error: 'Too Many Requests',
      code: 'X',
    });
  });
});
