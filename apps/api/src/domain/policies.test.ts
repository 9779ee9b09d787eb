import type { Role } from '@latchkey/db';
import { can } from '@latchkey/policy';
import { describe, expect, it } from 'vitest';
import { AccountPolicy, DocumentPolicy, OrganizationPolicy } from './policies.js';
import type { Subject } from './subject.js';

// The seed personas (docs/endpoints.md, "Demo data"), as the policies see them.
const ACME = { id: 'org-acme', plan: 'PRO' as const };
const GLOBEX = { id: 'org-globex', plan: 'FREE' as const };
const person = (id: string, memberships: [string, Role][], extra: Partial<Subject> = {}): Subject => ({
  id,
  superAdmin: false,
  suspended: false,
  emailVerified: true,
  roles: new Map(memberships),
  scopes: null,
  ...extra,
});
const alice = person('alice', [[ACME.id, 'OWNER']]);
const bob = person('bob', [[ACME.id, 'VIEWER']]);
const erin = person('erin', [[ACME.id, 'EDITOR']], { emailVerified: false });
const carol = person('carol', [[GLOBEX.id, 'ADMIN']]);
const root = person('root', [], { superAdmin: true });

const now = new Date('2026-11-22T12:00:00Z');
const doc = (
  fields: Partial<{
    status: 'DRAFT' | 'PUBLISHED' | 'ARCHIVED';
    legalHold: boolean;
    embargoUntil: Date | null;
    ownerId: string;
    organizationId: string;
  }> = {},
) => ({
  organizationId: ACME.id,
  ownerId: 'alice',
  status: 'PUBLISHED' as const,
  legalHold: false,
  embargoUntil: null,
  ...fields,
});

describe('domain policies (spec Authorization 6-11)', () => {
  it("tenancy: another organization's document is not visible, not even to its ADMIN", () => {
    expect(can(carol, DocumentPolicy.view, doc(), now)).toBe(false);
    expect(can(carol, DocumentPolicy.update, doc())).toBe(false);
    expect(can(alice, DocumentPolicy.view, doc({ organizationId: GLOBEX.id }), now)).toBe(false);
  });

  it('rule 11 (time): an embargoed document is invisible to VIEWERs until the embargo ends, visible to EDITOR+', () => {
    const embargoed = doc({ embargoUntil: new Date('2026-12-01T00:00:00Z') });
    expect(can(bob, DocumentPolicy.view, embargoed, now)).toBe(false);
    expect(can(bob, DocumentPolicy.view, embargoed, new Date('2026-12-01T00:00:00Z'))).toBe(true);
    expect(can(erin, DocumentPolicy.view, embargoed, now)).toBe(true);
  });

  it('VIEWERs see published documents only; EDITOR+ see drafts and archived ones', () => {
    expect(can(bob, DocumentPolicy.view, doc({ status: 'DRAFT' }), now)).toBe(false);
    expect(can(bob, DocumentPolicy.view, doc(), now)).toBe(true);
    expect(can(erin, DocumentPolicy.view, doc({ status: 'ARCHIVED' }), now)).toBe(true);
  });

  it('rule 11 (subject and organization): an unverified e-mail cannot publish, nor can a FREE organization', () => {
    expect(can(alice, DocumentPolicy.publish, doc(), ACME)).toBe(true);
    expect(can(erin, DocumentPolicy.publish, doc(), ACME)).toBe(false);
    const globexDoc = doc({ organizationId: GLOBEX.id, ownerId: 'carol' });
    expect(can(carol, DocumentPolicy.publish, globexDoc, GLOBEX)).toBe(false);
  });

  it('rule 8: legal hold beats the super-admin and the owner (binding ability)', () => {
    const held = doc({ legalHold: true });
    expect(can(root, DocumentPolicy.delete, held)).toBe(false);
    expect(can(alice, DocumentPolicy.delete, held)).toBe(false);
    expect(can(root, DocumentPolicy.delete, doc())).toBe(true);
    expect(can(alice, DocumentPolicy.delete, doc())).toBe(true);
    expect(can(bob, DocumentPolicy.delete, doc())).toBe(false);
    expect(can(erin, DocumentPolicy.delete, doc({ ownerId: 'erin' }))).toBe(true);
    expect(can(erin, DocumentPolicy.delete, doc())).toBe(false);
  });

  it('a suspended user is refused everything, even as OWNER or super-admin', () => {
    const suspendedAlice = { ...alice, suspended: true };
    const suspendedRoot = { ...root, suspended: true };
    expect(can(suspendedAlice, DocumentPolicy.view, doc(), now)).toBe(false);
    expect(can(suspendedAlice, DocumentPolicy.delete, doc())).toBe(false);
    expect(can(suspendedRoot, DocumentPolicy.update, doc())).toBe(false);
    expect(can(suspendedRoot, DocumentPolicy.delete, doc())).toBe(false);
  });

  it("role changes: ADMIN+ only, never to or from a role above one's own", () => {
    const acmeAdmin = person('dave', [[ACME.id, 'ADMIN']]);
    expect(can(acmeAdmin, OrganizationPolicy.changeRole, ACME, 'VIEWER', 'EDITOR')).toBe(true);
    expect(can(acmeAdmin, OrganizationPolicy.changeRole, ACME, 'VIEWER', 'OWNER')).toBe(false);
    expect(can(acmeAdmin, OrganizationPolicy.changeRole, ACME, 'OWNER', 'VIEWER')).toBe(false);
    expect(can(alice, OrganizationPolicy.changeRole, ACME, 'ADMIN', 'OWNER')).toBe(true);
    expect(can(erin, OrganizationPolicy.changeRole, ACME, 'VIEWER', 'EDITOR')).toBe(false);
  });

  it('billing e-mail and internal notes are for ADMIN+ and EDITOR+ respectively (field level)', () => {
    expect(can(alice, OrganizationPolicy.viewBilling, ACME)).toBe(true);
    expect(can(erin, OrganizationPolicy.viewBilling, ACME)).toBe(false);
    expect(can(erin, DocumentPolicy.viewInternalNotes, doc())).toBe(true);
    expect(can(bob, DocumentPolicy.viewInternalNotes, doc())).toBe(false);
  });

  it('a guest may do nothing', () => {
    expect(can(null, DocumentPolicy.view, doc(), now)).toBe(false);
    expect(can(null, OrganizationPolicy.view, ACME)).toBe(false);
    expect(can(null, DocumentPolicy.delete, doc())).toBe(false);
  });

  it('route-level abilities: a role held in some organization, and a verified e-mail to publish', () => {
    expect(can(bob, AccountPolicy.holdsRole, 'VIEWER')).toBe(true);
    expect(can(bob, AccountPolicy.holdsRole, 'EDITOR')).toBe(false);
    expect(can(carol, AccountPolicy.holdsRole, 'EDITOR')).toBe(true);
    expect(can(root, AccountPolicy.holdsRole, 'OWNER')).toBe(true);
    expect(can(null, AccountPolicy.holdsRole, 'VIEWER')).toBe(false);
    expect(can(alice, AccountPolicy.publish)).toBe(true);
    expect(can(erin, AccountPolicy.publish)).toBe(false);
  });

  it("e-mail addresses: one's own, and those of members of an organization one administers", () => {
    expect(can(bob, AccountPolicy.viewEmail, { id: 'bob' }, [ACME.id])).toBe(true);
    expect(can(bob, AccountPolicy.viewEmail, { id: 'alice' }, [ACME.id])).toBe(false);
    expect(can(alice, AccountPolicy.viewEmail, { id: 'bob' }, [ACME.id])).toBe(true);
    expect(can(carol, AccountPolicy.viewEmail, { id: 'bob' }, [ACME.id])).toBe(false);
    expect(can(root, AccountPolicy.viewEmail, { id: 'bob' }, [ACME.id])).toBe(true);
  });
});
