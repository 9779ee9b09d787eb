import { users } from '@latchkey/db';
import { authorize } from '@latchkey/policy';
import { eq } from 'drizzle-orm';
import { membershipsOf } from '../../domain/memberships.js';
import { AccountPolicy, OrganizationPolicy } from '../../domain/policies.js';
import { isUserId } from '../../domain/subjects.js';
import type { Resolvers } from '../../generated/resolvers.js';
import type { GraphQLContext } from '../context.js';

const subjectOf = (context: GraphQLContext) => context.app.subjects(context, context.caller?.subject ?? null);

export const accountResolvers: Resolvers = {
  Query: {
    me: async (_source, _args, context) => {
      const id = context.caller?.subject;
      if (!id || !isUserId(id)) return null;
      const [user] = await context.app.db.select().from(users).where(eq(users.id, id)).limit(1);
      if (!user) return null;
      authorize(await subjectOf(context), AccountPolicy.view, [user], { handler: 'Query.me' });
      return user;
    },
  },
  User: {
    emailVerified: (user) => user.emailVerified,
    memberships: (user, _args, { app }) => membershipsOf(app.db, user.id),
  },
  Membership: {
    role: (membership) => membership.role,
    organization: (membership) => membership.organization,
  },
  Organization: {
    id: (org) => org.id,
    slug: (org) => org.slug,
    name: (org) => org.name,
    plan: (org) => org.plan,
    // Field level (spec Authorization 3, 12): nullable, FORBIDDEN at its path for anyone below ADMIN.
    billingEmail: async (org, _args, context) => {
      authorize(await subjectOf(context), OrganizationPolicy.viewBilling, [org], { handler: 'Organization.billingEmail' });
      return org.billingEmail;
    },
  },
};
