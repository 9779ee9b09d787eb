import { findOrganizationBySlug } from '@latchkey/db';
import { authorizeOrHide } from './access.js';
import { NotFoundError } from './errors.js';
import { OrganizationPolicy } from './policies.js';
import { requireSlug } from './validate.js';
/** One organization by slug; another tenant's answers NOT_FOUND, exactly like a missing one. */
export async function getOrganization(request, slug, field = ['slug']) {
    const organization = await findOrganizationBySlug(request.db, requireSlug(slug, field));
    if (!organization)
        throw new NotFoundError();
    authorizeOrHide(request, OrganizationPolicy.view, [organization]);
    return organization;
}
//# sourceMappingURL=organizations.js.map