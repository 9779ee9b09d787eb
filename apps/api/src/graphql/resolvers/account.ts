import { organizations, users } from '@latchkey/db';
import { authorize } from '@latchkey/policy';
import { eq } from 'drizzle-orm';
import { authorizeOrHide } from '../../domain/access.js';
import { NotFoundError } from '../../domain/errors.js';
import { changeMemberRole, membershipsOf } from '../../domain/memberships.js';
import { AccountPolicy, OrganizationPolicy } from '../../domain/policies.js';
import { isUuid, requireSlug } from '../../domain/validate.js';
import type { Resolvers } from '../../generated/resolvers.js';
import { dbOf, domainRequest, loadersOf, subjectOf } from '../access.js';

export const accountResolvers = {
  Query: {
    me: async (_source, _args, context) => {
      const id = context.caller?.subject;
      if (!id || !isUuid(id)) return null;
      const [user] = await dbOf(context).select().from(users).where(eq(users.id, id)).limit(1);
      if (!user) return null;
      authorize(await subjectOf(context), AccountPolicy.view, [user], { handler: 'Query.me' });
      return user;
    },
    organization: async (_source, { slug }, context) => {
      const request = await domainRequest(context, 'Query.organization');
      const [org] = await dbOf(context)
        .select()
        .from(organizations)
        .where(eq(organizations.slug, requireSlug(slug, ['slug'])))
        .limit(1);
      if (!org) throw new NotFoundError();
      // Another tenant's organization must look exactly like a missing one.
      authorizeOrHide(request, OrganizationPolicy.view, [org]);
      return org;
    },
  },
  User: {
    emailVerified: (user) => user.emailVerified,
    // Field level per row (spec Authorization 3, 12): the account itself and ADMINs of one of its organizations.
    email: async (user, _args, context) => {
      const subject = await subjectOf(context);
      const organizationIds = subject?.id === user.id ? [] : await loadersOf(context).organizationIdsOf.load(user.id);
      authorize(subject, AccountPolicy.viewEmail, [user, organizationIds], { handler: 'User.email' });
      return user.email;
    },
    memberships: (user, _args, context) => membershipsOf(dbOf(context), user.id),
  },
  // The plain Membership and Organization fields resolve by property name; billingEmail is guarded by @can.
  Membership: {
    user: async (membership, _args, context) => (await loadersOf(context).user.load(membership.userId))!,
  },
  Mutation: {
    changeMemberRole: async (_source, { input }, context) =>
      changeMemberRole(await domainRequest(context, 'Mutation.changeMemberRole'), input),
  },
} satisfies Resolvers;
