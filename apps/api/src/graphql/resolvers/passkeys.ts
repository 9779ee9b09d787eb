import { isPasskeyId, listPasskeys, MAX_LABEL_LENGTH, PasskeyError, passkeyFactor, removePasskey, renamePasskey } from '@latchkey/auth';
import { authorize } from '@latchkey/policy';
import { InvalidInputError, NotFoundError } from '../../domain/errors.js';
import { AccountPolicy } from '../../domain/policies.js';
import { isUuid } from '../../domain/validate.js';
import type { Resolvers } from '../../generated/resolvers.js';
import { dbOf, subjectOf } from '../context.js';
import type { GraphQLContext } from '../context.js';

/** The signed-in account the passkey operations act for (AccountPolicy.view: itself, never suspended). */
async function ownAccount(context: GraphQLContext, handler: string): Promise<string> {
  const subject = await subjectOf(context);
  const id = subject?.id ?? '';
  authorize(subject, AccountPolicy.view, [{ id }], { handler });
  return id;
}

const passkeyId = (id: string) => {
  if (!isPasskeyId(id)) throw new InvalidInputError('id must be a passkey id (base64url).', ['id']);
  return id;
};

export const passkeyResolvers = {
  User: {
    // Field level: one's own passkeys only.
    passkeys: async (user, _args, context) => {
      authorize(await subjectOf(context), AccountPolicy.view, [user], { handler: 'User.passkeys' });
      return isUuid(user.id) ? listPasskeys(dbOf(context), user.id) : [];
    },
  },
  Mutation: {
    renamePasskey: async (_source, { id, label }, context) => {
      const owner = await ownAccount(context, 'Mutation.renamePasskey');
      try {
        const passkey = await renamePasskey(dbOf(context), owner, passkeyId(id), label);
        if (!passkey) throw new NotFoundError();
        return { passkey, userErrors: [] };
      } catch (error) {
        if (error instanceof PasskeyError) throw new InvalidInputError(`label must be 1-${MAX_LABEL_LENGTH} characters.`, ['label']);
        throw error;
      }
    },
    removePasskey: async (_source, { id }, context) => {
      const owner = await ownAccount(context, 'Mutation.removePasskey');
      if (!(await removePasskey(dbOf(context), owner, passkeyId(id)))) throw new NotFoundError();
      const details = { factor: passkeyFactor.authority };
      context.app.audit.record({ type: 'factor.removed', details, actor: owner, subject: owner, requestId: context.requestId });
      return { removedPasskeyId: id, userErrors: [] };
    },
  },
} satisfies Resolvers;
