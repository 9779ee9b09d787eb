import { expect } from 'vitest';
import type { Response } from './authorization-suite.js';

/**
 * How a refusal reads on each surface: GraphQL `extensions.code` NOT_FOUND / FORBIDDEN / UNAUTHENTICATED with
 * a fixed message and nothing else, REST 404 / 403 / 401 with a `{statusCode, message, error}` body, and neither
 * naming a policy or an ability (spec Events 3).
 */

export type Code = 'NOT_FOUND' | 'FORBIDDEN' | 'UNAUTHENTICATED';
export const HTTP_STATUS: Record<Code, number> = { NOT_FOUND: 404, FORBIDDEN: 403, UNAUTHENTICATED: 401 };
export const MESSAGES: Record<Code, string> = {
  NOT_FOUND: 'The requested record was not found.',
  FORBIDDEN: 'You are not allowed to do this.',
  UNAUTHENTICATED: 'Authentication is required.',
};
/** Names that exist only inside the policy layer: no response body may contain them (spec Events 3). */
export const POLICY_NAMES =
  /DocumentPolicy|AccountPolicy|OrganizationPolicy|RoutePolicy|holdsRole|viewEmail|viewInternalNotes|viewBilling|changeRole|AUTHORIZATION_DENIED|AuthorizationDenied/;

/** An execution error at the root field: null there, one error with only a code, transport 200. */
export function expectGraphQLRefusal(res: Response, field: string, code: Code) {
  expect(res.status, res.text).toBe(200);
  expect(res.json.data).toEqual({ [field]: null });
  expect(res.json.errors).toHaveLength(1);
  expect(res.json.errors[0]).toMatchObject({ message: MESSAGES[code], path: [field], extensions: { code } });
  expect(res.json.errors[0].extensions).toEqual({ code });
  expect(res.text).not.toMatch(POLICY_NAMES);
}

/** The REST twin: the status of the code and a `{statusCode, message, error}` body. */
export function expectRestRefusal(res: Response, code: Code) {
  expect(res.status, res.text).toBe(HTTP_STATUS[code]);
  expect(res.json).toMatchObject({
    statusCode: HTTP_STATUS[code],
    message: code === 'UNAUTHENTICATED' ? expect.any(String) : MESSAGES[code],
    error: expect.any(String),
  });
  if (code === 'UNAUTHENTICATED') expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  expect(res.text).not.toMatch(POLICY_NAMES);
}

export function expectSameRefusal(graphql: Response, field: string, restResponse: Response, code: Code) {
  expectGraphQLRefusal(graphql, field, code);
  expectRestRefusal(restResponse, code);
}

/** A guest's GraphQL operation refused whole before execution (spec Authorization 4, 7). */
export function expectGuestRefused(res: Response) {
  expect(res.status, res.text).toBe(401);
  expect(res.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
  // RFC 6750's bare challenge, naming where the API's protected resource metadata is (RFC 9728 §5.1).
  expect(res.headers.get('www-authenticate')).toMatch(
    /^Bearer resource_metadata="http:\/\/[^"]+\/\.well-known\/oauth-protected-resource"$/,
  );
  expect(res.json).not.toHaveProperty('data');
  expect(res.json.errors).toEqual([{ message: 'Sign in to perform this operation.', extensions: { code: 'UNAUTHENTICATED' } }]);
}

export function expectUserError(graphql: Response, field: string, restResponse: Response | null, code: string) {
  expect(graphql.status).toBe(200);
  expect(graphql.json.errors).toBeUndefined();
  expect(graphql.json.data[field]).toMatchObject({ userErrors: [{ code }] });
  expect(graphql.json.data[field].userErrors).toHaveLength(1);
  if (restResponse) {
    expect(restResponse.status, restResponse.text).toBe(409);
    expect(restResponse.json).toMatchObject({
      statusCode: 409,
      error: 'Conflict',
      code,
      message: graphql.json.data[field].userErrors[0].message,
    });
  }
}
