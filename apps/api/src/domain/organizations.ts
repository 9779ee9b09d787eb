import type { OrganizationRow } from '@latchkey/db';
import { authorizeOrHide, type DomainRequest } from './request.js';
import { NotFoundError } from './errors.js';
import { OrganizationPolicy } from './policies.js';
import { requireSlug } from './validate.js';

/**
 * One organization by slug; another tenant's answers NOT_FOUND, exactly like a missing one. Through the request's
 * loader: an organization the request's pages or memberships brought (a dashboard's) costs no statement of its own.
 */
export async function getOrganization(request: DomainRequest, slug: string, field = ['slug']): Promise<OrganizationRow> {
  const organization = await request.loaders.organizationBySlug.load(requireSlug(slug, field));
  if (!organization) throw new NotFoundError();
  authorizeOrHide(request, OrganizationPolicy.view, [organization]);
  return organization;
}
