import { organizations, users } from '@latchkey/db';
import { authorize } from '@latchkey/policy';
import { eq } from 'drizzle-orm';
import { membershipsOf } from '../../domain/memberships.js';
import { AccountPolicy, OrganizationPolicy } from '../../domain/policies.js';
import { isUuid } from '../../domain/subjects.js';
import type { Resolvers } from '../../generated/resolvers.js';
import { authorizeOrHide, subjectOf } from '../access.js';
import { badUserInput, notFound } from '../errors.js';

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

export const accountResolvers: Resolvers = {
  Query: {
    me: async (_source, _args, context) => {
      const id = context.caller?.subject;
      if (!id || !isUuid(id)) return null;
      const [user] = await context.app.db.select().from(users).where(eq(users.id, id)).limit(1);
      if (!user) return null;
      authorize(await subjectOf(context), AccountPolicy.view, [user], { handler: 'Query.me' });
      return user;
    },
    organization: async (_source, { slug }, context) => {
      if (!SLUG.test(slug)) throw badUserInput('slug must be 1-63 lower-case letters, digits or hyphens.');
      const [org] = await context.app.db.select().from(organizations).where(eq(organizations.slug, slug)).limit(1);
      if (!org) throw notFound();
      // Another tenant's organization must look exactly like a missing one.
      authorizeOrHide(await subjectOf(context), OrganizationPolicy.view, [org], { handler: 'Query.organization' });
      return org;
    },
  },
  User: {
    emailVerified: (user) => user.emailVerified,
    memberships: (user, _args, { app }) => membershipsOf(app.db, user.id),
  },
  // Membership and the plain Organization fields resolve by property name.
  Organization: {
    // Field level (spec Authorization 3, 12): nullable, FORBIDDEN at its path for anyone below ADMIN.
    billingEmail: async (org, _args, context) => {
      authorize(await subjectOf(context), OrganizationPolicy.viewBilling, [org], { handler: 'Organization.billingEmail' });
      return org.billingEmail;
    },
  },
};
