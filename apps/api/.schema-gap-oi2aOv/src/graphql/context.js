/**
 * The `Authorization` value an operation carries: a WebSocket operation its connection's credential
 * (`connectionAuthorization`, given by the socket layer), an HTTP one its request's header.
 */
export function authorizationOfOperation(context) {
    const fromConnection = context.connectionAuthorization;
    if (fromConnection !== undefined)
        return fromConnection;
    const { req } = context;
    return req ? req.headers.authorization : context.request.headers.get('authorization');
}
//# sourceMappingURL=context.js.map