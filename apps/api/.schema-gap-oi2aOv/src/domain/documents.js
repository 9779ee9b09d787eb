import { findDocumentByTitle, findDocumentWithOrganization, listVisibleDocuments, } from '@latchkey/db';
import { authorizeIn, authorizeOrHide } from './access.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { InvalidInputError, NotFoundError } from './errors.js';
import { DocumentPolicy, visibleDocumentsScope } from './policies.js';
import { requireId, requireSlug, requireText } from './validate.js';
export const DOCUMENT_STATUSES = ['DRAFT', 'PUBLISHED', 'ARCHIVED'];
export const MAX_PAGE_SIZE = 100;
/**
 * One document the caller may see. Missing, another tenant's, and (for VIEWERs) unpublished or embargoed
 * documents all answer NOT_FOUND (spec Authorization 2, 6, 11).
 */
export async function getDocument(request, id, field = ['id']) {
    const found = await findDocumentWithOrganization(request.db, requireId(id, field));
    if (!found)
        throw new NotFoundError();
    request.loaders.organization.prime(found.organization.id, found.organization);
    authorizeOrHide(request, DocumentPolicy.view, [found.document, new Date()]);
    return found;
}
/**
 * One document by its organization and title (unique within an organization), under the same rule as by id:
 * NOT_FOUND for missing and hidden alike (another tenant's organization included).
 */
export async function getDocumentByTitle(request, key, field = ['lookup', 'title']) {
    const slug = requireSlug(key.organization, [...field, 'organization']);
    const title = requireText(key.title, [...field, 'title'], { min: 1, max: 200 });
    const found = await findDocumentByTitle(request.db, { organizationSlug: slug, title });
    if (!found)
        throw new NotFoundError();
    request.loaders.organization.prime(found.organization.id, found.organization);
    authorizeOrHide(request, DocumentPolicy.view, [found.document, new Date()]);
    return found;
}
/**
 * The documents the caller may see, newest first, filtered inside one SQL statement (spec Authorization 15)
 * and paged by keyset. Each row's organization comes from the same statement and primes the loader.
 */
export async function listDocuments(request, input, fields = { filter: ['filter'], first: ['first'], after: ['after'] }) {
    const first = input.first ?? 20;
    if (!Number.isInteger(first) || first < 0 || first > MAX_PAGE_SIZE) {
        throw new InvalidInputError(`first must be an integer from 0 to ${MAX_PAGE_SIZE}.`, fields.first);
    }
    const slug = input.organization == null ? null : requireSlug(input.organization, [...fields.filter, 'organization']);
    const statuses = input.status ?? null;
    if (statuses?.some((status) => !DOCUMENT_STATUSES.includes(status))) {
        throw new InvalidInputError(`status must be one of ${DOCUMENT_STATUSES.join(', ')}.`, [...fields.filter, 'status']);
    }
    const after = input.after == null ? null : decodeCursor(input.after, fields.after);
    authorizeIn(request, DocumentPolicy.list, []);
    const rows = first === 0
        ? []
        : await listVisibleDocuments(request.db, {
            visibility: visibleDocumentsScope(request.subject, new Date()),
            organizationSlug: slug,
            statuses: statuses,
            after,
            limit: first + 1,
        });
    const page = rows.slice(0, first);
    const edges = page.map(({ document, organization, position }) => {
        request.loaders.organization.prime(organization.id, organization);
        return { cursor: encodeCursor({ createdAt: position, id: document.id }), node: document };
    });
    return {
        edges,
        pageInfo: {
            hasNextPage: rows.length > first,
            hasPreviousPage: false,
            startCursor: edges[0]?.cursor ?? null,
            endCursor: edges.at(-1)?.cursor ?? null,
        },
    };
}
//# sourceMappingURL=documents.js.map