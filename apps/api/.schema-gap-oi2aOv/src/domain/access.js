import { authorize, isAuthorizationDenied } from '@latchkey/policy';
import { NotFoundError } from './errors.js';
/**
 * The one builder of a `DomainRequest`, for GraphQL, REST and the CLI alike: `scope` keys the per-request memos
 * (the HTTP request, a GraphQL context, or one subscription event), so however many fields or checks ask, the
 * subject and the loaders are made once.
 */
export async function openDomainRequest(services, scope, input) {
    return {
        db: input.db,
        subject: await services.subjects(scope, input.userId, input.db),
        loaders: services.loaders(scope, input.db),
        handler: input.handler,
        authentication: input.authentication,
        events: services.events,
    };
}
/**
 * Record level where existence is sensitive (spec Authorization 6): a denial answers exactly like a
 * missing record (NOT_FOUND), while the denial is still published by `authorize`.
 */
export function authorizeOrHide(request, ability, args) {
    try {
        authorize(request.subject, ability, args, { handler: request.handler });
    }
    catch (error) {
        if (isAuthorizationDenied(error))
            throw new NotFoundError();
        throw error;
    }
}
export function authorizeIn(request, ability, args) {
    authorize(request.subject, ability, args, { handler: request.handler });
}
//# sourceMappingURL=access.js.map