import type { DocumentRow, OrganizationRow, Role } from '@latchkey/db';
import { binding, createRoleHierarchy, definePolicy } from '@latchkey/policy';
import type { Subject } from './subject.js';

export const roles = createRoleHierarchy<Role>(['OWNER', 'ADMIN', 'EDITOR', 'VIEWER']);

type Org = Pick<OrganizationRow, 'id' | 'plan'>;
type Doc = Pick<DocumentRow, 'organizationId' | 'ownerId' | 'status' | 'legalHold' | 'embargoUntil'>;

const roleIn = (user: Subject | null, organizationId: string) => user?.roles.get(organizationId);
const atLeast = (user: Subject | null, organizationId: string, required: Role) => roles.grants(roleIn(user, organizationId), required);

/**
 * Runs before every non-binding ability: a suspended user is refused everything, a platform super-admin
 * is allowed everything else (spec Authorization 8).
 */
function before(user: Subject | null): boolean | undefined {
  if (!user) return undefined;
  if (user.suspended) return false;
  if (user.superAdmin) return true;
  return undefined;
}

/** An account is visible to itself; the before hook refuses a suspended one (and allows super-admins). */
export const AccountPolicy = definePolicy('AccountPolicy', {
  before,
  abilities: {
    view: (user: Subject | null, account: { id: string }) => user !== null && user.id === account.id,
  },
});

export const OrganizationPolicy = definePolicy('OrganizationPolicy', {
  before,
  abilities: {
    view: (user: Subject | null, org: Org) => atLeast(user, org.id, 'VIEWER'),
    viewBilling: (user: Subject | null, org: Org) => atLeast(user, org.id, 'ADMIN'),
    /** the new role is never above one's own, nor is the member's current one */
    changeRole: (user: Subject | null, org: Org, current: Role, next: Role) =>
      atLeast(user, org.id, 'ADMIN') && roles.grants(roleIn(user, org.id), current) && roles.grants(roleIn(user, org.id), next),
  },
});

/** Embargoed or unpublished documents are invisible to VIEWERs, as if missing (spec Authorization 6, 11). */
function visibleTo(user: Subject | null, doc: Doc, now: Date): boolean {
  if (atLeast(user, doc.organizationId, 'EDITOR')) return true;
  if (!atLeast(user, doc.organizationId, 'VIEWER')) return false;
  return doc.status === 'PUBLISHED' && (doc.embargoUntil === null || doc.embargoUntil <= now);
}

export const DocumentPolicy = definePolicy('DocumentPolicy', {
  before,
  abilities: {
    view: (user: Subject | null, doc: Doc, now: Date) => visibleTo(user, doc, now),
    viewInternalNotes: (user: Subject | null, doc: Doc) => atLeast(user, doc.organizationId, 'EDITOR'),
    create: (user: Subject | null, org: Org) => atLeast(user, org.id, 'EDITOR'),
    update: (user: Subject | null, doc: Doc) => atLeast(user, doc.organizationId, 'EDITOR'),
    archive: (user: Subject | null, doc: Doc) => atLeast(user, doc.organizationId, 'EDITOR'),
    /** publishing needs a verified e-mail and a PRO organization (attribute rules, spec Authorization 11) */
    publish: (user: Subject | null, doc: Doc, org: Org) =>
      atLeast(user, doc.organizationId, 'EDITOR') && user!.emailVerified && org.plan === 'PRO',
    setLegalHold: (user: Subject | null, doc: Doc) => atLeast(user, doc.organizationId, 'ADMIN'),
    /**
     * Binding: a document under legal hold cannot be deleted by anyone, super-admins included, so the
     * before hook is not consulted and the check names every allowed case itself.
     */
    delete: binding(
      (user: Subject | null, doc: Doc) =>
        !doc.legalHold &&
        user !== null &&
        !user.suspended &&
        (user.superAdmin || atLeast(user, doc.organizationId, 'ADMIN') || (doc.ownerId === user.id && atLeast(user, doc.organizationId, 'EDITOR'))),
    ),
  },
});
