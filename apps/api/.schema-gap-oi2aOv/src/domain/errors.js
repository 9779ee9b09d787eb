/**
 * Failures of the domain services that every entry point reports the same way (GraphQL `extensions.code`,
 * REST status). Messages are fixed and safe to show; denials are `AuthorizationDenied` from the policy layer.
 */
export class DomainError extends Error {
}
/** Missing, or hidden because its existence is sensitive (spec Authorization 6): both answer alike. */
export class NotFoundError extends DomainError {
    code = 'NOT_FOUND';
    status = 404;
    constructor() {
        super('The requested record was not found.');
        this.name = 'NotFoundError';
    }
}
/** Input that is well-formed for the transport but unacceptable (a malformed id, an over-long title). */
export class InvalidInputError extends DomainError {
    field;
    code = 'BAD_USER_INPUT';
    status = 400;
    constructor(message, 
    /** the input field at fault, e.g. ['input', 'title'] */
    field) {
        super(message);
        this.field = field;
        this.name = 'InvalidInputError';
    }
}
export function isDomainError(error) {
    return error instanceof DomainError;
}
//# sourceMappingURL=errors.js.map