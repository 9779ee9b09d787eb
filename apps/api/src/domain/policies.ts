import type { DocumentRow, DocumentVisibility, OrganizationRow, Role } from '@latchkey/db';
import { binding, createRoleHierarchy, definePolicy } from '@latchkey/policy';
import { isPerson, type Subject } from './subject.js';

export const roles = createRoleHierarchy<Role>(['OWNER', 'ADMIN', 'EDITOR', 'VIEWER']);

type Org = Pick<OrganizationRow, 'id' | 'plan'>;
type Doc = Pick<DocumentRow, 'organizationId' | 'ownerId' | 'status' | 'legalHold' | 'embargoUntil'>;

const roleIn = (subject: Subject | null, organizationId: string) => subject?.roles.get(organizationId);
const atLeast = (subject: Subject | null, organizationId: string, required: Role) =>
  roles.grants(roleIn(subject, organizationId), required);

/**
 * Runs before every non-binding ability: a suspended caller is refused everything, a platform super-admin
 * is allowed everything else (spec Authorization 8).
 */
function before(subject: Subject | null): boolean | undefined {
  if (!subject) return undefined;
  if (subject.suspended) return false;
  if (subject.superAdmin) return true;
  return undefined;
}

/** An account is visible to itself; the before hook refuses a suspended one (and allows super-admins). */
export const AccountPolicy = definePolicy('AccountPolicy', {
  before,
  scopes: { view: 'account:read', endSessions: 'sessions:manage', publish: 'documents:write' },
  abilities: {
    /** a service (client credentials) has no account of its own: nothing it asks about "its account" is allowed */
    view: (subject: Subject | null, account: { id: string }) => isPerson(subject) && subject.id === account.id,
    /** an e-mail address is for its owner and for ADMINs of an organization the account belongs to */
    viewEmail: (subject: Subject | null, account: { id: string }, organizationIds: readonly string[]) =>
      subject !== null && (subject.id === account.id || organizationIds.some((id) => atLeast(subject, id, 'ADMIN'))),
    /** route level: at least `role` in some organization (the record decides which one) */
    holdsRole: (subject: Subject | null, role: Role) =>
      subject !== null && [...subject.roles.values()].some((held) => roles.grants(held, role)),
    /** another account exists for the caller only when they share an organization (else it answers NOT_FOUND) */
    viewMember: (subject: Subject | null, account: { id: string }, organizationIds: readonly string[]) =>
      subject !== null && (subject.id === account.id || organizationIds.some((id) => atLeast(subject, id, 'VIEWER'))),
    /**
     * Ending an account's sessions: one's own, and a member's for an ADMIN or above of one of the member's
     * organizations whose role there is not above the caller's (an ADMIN cannot sign an OWNER out).
     */
    endSessions: (subject: Subject | null, account: { id: string }, memberships: readonly { organizationId: string; role: Role }[]) =>
      subject !== null &&
      (subject.id === account.id ||
        memberships.some(
          (member) => atLeast(subject, member.organizationId, 'ADMIN') && roles.grants(roleIn(subject, member.organizationId), member.role),
        )),
    /** route level: publishing needs a verified e-mail, whatever the document */
    publish: (subject: Subject | null) => subject?.emailVerified,
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
    view: (subject: Subject | null, org: Org) => atLeast(subject, org.id, 'VIEWER'),
    viewBilling: (subject: Subject | null, org: Org) => atLeast(subject, org.id, 'ADMIN'),
    /** the new role is never above one's own, nor is the member's current one */
    changeRole: (subject: Subject | null, org: Org, current: Role, next: Role) =>
      atLeast(subject, org.id, 'ADMIN') && roles.grants(roleIn(subject, org.id), current) && roles.grants(roleIn(subject, org.id), next),
  },
});

/** Embargoed or unpublished documents are invisible to VIEWERs, as if missing (spec Authorization 6, 11). */
function visibleTo(subject: Subject | null, doc: Doc, now: Date): boolean {
  if (atLeast(subject, doc.organizationId, 'EDITOR')) return true;
  if (!atLeast(subject, doc.organizationId, 'VIEWER')) return false;
  return doc.status === 'PUBLISHED' && (doc.embargoUntil === null || doc.embargoUntil <= now);
}

/**
 * The list twin of `DocumentPolicy.view` (spec Authorization 15): which documents a list may return, decided here
 * and applied in the list's SQL (`listVisibleDocuments` of `@latchkey/db`), never by loading rows and checking
 * each. EDITORs and above see every document of their organizations, VIEWERs the published ones out of embargo.
 * The test suite proves both agree for every seeded user and document.
 */
export function visibleDocumentsScope(subject: Subject, now: Date): DocumentVisibility {
  if (subject.superAdmin) return { everything: true };
  const anyStatusIn: string[] = [];
  const publishedIn: string[] = [];
  for (const [organizationId, role] of subject.roles) {
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
    list: (subject: Subject | null) => subject !== null,
    view: (subject: Subject | null, doc: Doc, now: Date) => visibleTo(subject, doc, now),
    viewInternalNotes: (subject: Subject | null, doc: Doc) => atLeast(subject, doc.organizationId, 'EDITOR'),
    /** a document's owner is a person: a service (client credentials) edits documents but creates none */
    create: (subject: Subject | null, org: Org) => isPerson(subject) && atLeast(subject, org.id, 'EDITOR'),
    update: (subject: Subject | null, doc: Doc) => atLeast(subject, doc.organizationId, 'EDITOR'),
    archive: (subject: Subject | null, doc: Doc) => atLeast(subject, doc.organizationId, 'EDITOR'),
    /** publishing needs a verified e-mail and a PRO organization (attribute rules, spec Authorization 11) */
    publish: (subject: Subject | null, doc: Doc, org: Org) =>
      atLeast(subject, doc.organizationId, 'EDITOR') && subject!.emailVerified && org.plan === 'PRO',
    setLegalHold: (subject: Subject | null, doc: Doc) => atLeast(subject, doc.organizationId, 'ADMIN'),
    /**
     * Binding: a document under legal hold cannot be deleted by anyone, super-admins included, so the
     * before hook is not consulted and the check names every allowed case itself.
     */
    delete: binding(
      (subject: Subject | null, doc: Doc) =>
        !doc.legalHold &&
        subject !== null &&
        !subject.suspended &&
        (subject.superAdmin ||
          atLeast(subject, doc.organizationId, 'ADMIN') ||
          (doc.ownerId === subject.id && atLeast(subject, doc.organizationId, 'EDITOR'))),
    ),
  },
});
