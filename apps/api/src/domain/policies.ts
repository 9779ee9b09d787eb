import type { DocumentRow, DocumentVisibility, OrganizationRow, Role } from '@latchkey/db';
import { binding, createRoleHierarchy, definePolicy } from '@latchkey/policy';
import { isPerson, type Subject } from './subject.js';

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
  scopes: { view: 'account:read', endSessions: 'sessions:manage', publish: 'documents:write' },
  abilities: {
    /** a service (client credentials) has no account of its own: nothing it asks about "its account" is allowed */
    view: (user: Subject | null, account: { id: string }) => isPerson(user) && user.id === account.id,
    /** an e-mail address is for its owner and for ADMINs of an organization the account belongs to */
    viewEmail: (user: Subject | null, account: { id: string }, organizationIds: readonly string[]) =>
      user !== null && (user.id === account.id || organizationIds.some((id) => atLeast(user, id, 'ADMIN'))),
    /** route level: at least `role` in some organization (the record decides which one) */
    holdsRole: (user: Subject | null, role: Role) => user !== null && [...user.roles.values()].some((held) => roles.grants(held, role)),
    /** another account exists for the caller only when they share an organization (else it answers NOT_FOUND) */
    viewMember: (user: Subject | null, account: { id: string }, organizationIds: readonly string[]) =>
      user !== null && (user.id === account.id || organizationIds.some((id) => atLeast(user, id, 'VIEWER'))),
    /**
     * Ending an account's sessions: one's own, and a member's for an ADMIN or above of one of the member's
     * organizations whose role there is not above the caller's (an ADMIN cannot sign an OWNER out).
     */
    endSessions: (user: Subject | null, account: { id: string }, memberships: readonly { organizationId: string; role: Role }[]) =>
      user !== null &&
      (user.id === account.id ||
        memberships.some(
          (member) => atLeast(user, member.organizationId, 'ADMIN') && roles.grants(roleIn(user, member.organizationId), member.role),
        )),
    /** route level: publishing needs a verified e-mail, whatever the document */
    publish: (user: Subject | null) => user?.emailVerified,
  },
});

/**
 * Seeing an organization is part of seeing its documents (`documents:read` reaches `Document.organization`);
 * `Query.organization` asks `organizations:read` at the route level. Its billing address and its members' roles are
 * the organization's own.
 */
export const OrganizationPolicy = definePolicy('OrganizationPolicy', {
  before,
  scopes: { viewBilling: 'organizations:read', changeRole: 'organizations:manage' },
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

/**
 * The list twin of `DocumentPolicy.view` (spec Authorization 15): which documents a list may return, decided here
 * and applied in the list's SQL (`listVisibleDocuments` of `@latchkey/db`), never by loading rows and checking
 * each. EDITORs and above see every document of their organizations, VIEWERs the published ones out of embargo.
 * The test suite proves both agree for every seeded user and document.
 */
export function visibleDocumentsScope(user: Subject, now: Date): DocumentVisibility {
  if (user.superAdmin) return { everything: true };
  const anyStatusIn: string[] = [];
  const publishedIn: string[] = [];
  for (const [organizationId, role] of user.roles) {
    if (roles.grants(role, 'EDITOR')) anyStatusIn.push(organizationId);
    else if (roles.grants(role, 'VIEWER')) publishedIn.push(organizationId);
  }
  return { everything: false, anyStatusIn, publishedIn, now };
}

export const DocumentPolicy = definePolicy('DocumentPolicy', {
  before,
  scopes: {
    list: 'documents:read',
    view: 'documents:read',
    viewInternalNotes: 'documents:read',
    create: 'documents:write',
    update: 'documents:write',
    archive: 'documents:write',
    publish: 'documents:write',
    setLegalHold: 'documents:write',
    delete: 'documents:write',
  },
  abilities: {
    /** listing is open to every signed-in account the before hook lets through; rows are filtered in SQL */
    list: (user: Subject | null) => user !== null,
    view: (user: Subject | null, doc: Doc, now: Date) => visibleTo(user, doc, now),
    viewInternalNotes: (user: Subject | null, doc: Doc) => atLeast(user, doc.organizationId, 'EDITOR'),
    /** a document's owner is a person: a service (client credentials) edits documents but creates none */
    create: (user: Subject | null, org: Org) => isPerson(user) && atLeast(user, org.id, 'EDITOR'),
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
        (user.superAdmin ||
          atLeast(user, doc.organizationId, 'ADMIN') ||
          (doc.ownerId === user.id && atLeast(user, doc.organizationId, 'EDITOR'))),
    ),
  },
});
