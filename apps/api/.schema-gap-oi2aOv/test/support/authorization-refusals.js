import { expect } from 'vitest';
export const HTTP_STATUS = { NOT_FOUND: 404, FORBIDDEN: 403, UNAUTHENTICATED: 401 };
export const MESSAGES = {
    NOT_FOUND: 'The requested record was not found.',
    FORBIDDEN: 'You are not allowed to do this.',
    UNAUTHENTICATED: 'Authentication is required.',
};
/** Names that exist only inside the policy layer: no response body may contain them (spec Events 3). */
export const POLICY_NAMES = /DocumentPolicy|AccountPolicy|OrganizationPolicy|RoutePolicy|holdsRole|viewEmail|viewInternalNotes|viewBilling|changeRole|AUTHORIZATION_DENIED|AuthorizationDenied/;
/** An execution error at the root field: null there, one error with only a code, transport 200. */
export function expectGraphQLRefusal(res, field, code) {
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toEqual({ [field]: null });
    expect(res.json.errors).toHaveLength(1);
    expect(res.json.errors[0]).toMatchObject({ message: MESSAGES[code], path: [field], extensions: { code } });
    expect(res.json.errors[0].extensions).toEqual({ code });
    expect(res.text).not.toMatch(POLICY_NAMES);
}
/** The REST twin: the status of the code and a `{statusCode, message, error}` body. */
export function expectRestRefusal(res, code) {
    expect(res.status, res.text).toBe(HTTP_STATUS[code]);
    expect(res.json).toMatchObject({
        statusCode: HTTP_STATUS[code],
        message: code === 'UNAUTHENTICATED' ? expect.any(String) : MESSAGES[code],
        error: expect.any(String),
    });
    if (code === 'UNAUTHENTICATED')
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(res.text).not.toMatch(POLICY_NAMES);
}
export function expectSameRefusal(graphql, field, restResponse, code) {
    expectGraphQLRefusal(graphql, field, code);
    expectRestRefusal(restResponse, code);
}
/** A guest's GraphQL operation refused whole before execution (spec Authorization 4, 7). */
export function expectGuestRefused(res) {
    expect(res.status, res.text).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(res.json).not.toHaveProperty('data');
    expect(res.json.errors).toEqual([{ message: 'Sign in to perform this operation.', extensions: { code: 'UNAUTHENTICATED' } }]);
}
export function expectUserError(graphql, field, restResponse, code) {
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
//# sourceMappingURL=authorization-refusals.js.map