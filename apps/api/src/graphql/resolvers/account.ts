import { authorize } from '@latchkey/policy';
import { handleMaybePromise, type MaybePromise } from '@whatwg-node/promise-helpers';
import { getOwnAccount } from '../../domain/accounts.js';
import { changeMemberRole, type MembershipWithOrganization } from '../../domain/memberships.js';
import { getOrganization } from '../../domain/organizations.js';
import { AccountPolicy } from '../../domain/policies.js';
import type { Resolvers } from '../../generated/resolvers.js';
import { dbOf, domainRequest, loadersOf, subjectAtHand, subjectOf } from '../context.js';

export const accountResolvers = {
  Query: {
    me: (_source, _args, context) => getOwnAccount(dbOf(context), context.caller?.subject, () => subjectOf(context), 'Query.me'),
    // Another tenant's organization looks exactly like a missing one.
    organization: async (_source, { slug }, context) => getOrganization(await domainRequest(context, 'Query.organization'), slug),
  },
  User: {
    // Field level per row (spec Authorization 3, 12): the account itself and ADMINs of one of its organizations.
    // Without a promise when the caller and the account's organizations are at hand (a page's owners).
    email: (user, _args, context) =>
      handleMaybePromise(
        () => subjectAtHand(context),
        (subject) =>
          handleMaybePromise(
            () => (subject?.id === user.id ? [] : loadersOf(context).organizationIdsOf.load(user.id)),
            (organizationIds) => {
              authorize(subject, AccountPolicy.viewEmail, [user, organizationIds], { handler: 'User.email' });
              return user.email;
            },
          ),
      ),
    // Batched and held per request: the caller's and a page's owners' memberships (a dashboard asks both) are one statement.
    memberships: (user, _args, context) => loadersOf(context).membershipsOf.load(user.id) as MaybePromise<MembershipWithOrganization[]>,
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
