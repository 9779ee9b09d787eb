import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { GraphQLContext } from '../context.js';

/**
 * Logs unexpected resolver failures with the request id, before masking replaces them with
 * INTERNAL_SERVER_ERROR; the client sees only the masked message.
 */
export function useErrorLog(logger: Logger): Plugin<GraphQLContext> {
  return {
    onExecute({ args }) {
      return {
        onExecuteDone({ result }) {
          if (!('errors' in result) || !result.errors) return;
          for (const error of result.errors) {
            const original = error.originalError;
            if (original && !(original instanceof GraphQLError)) {
              logger.error(
                { reqId: args.contextValue.requestId, path: error.path, err: original },
                'resolver failed',
              );
            }
          }
        },
      };
    },
  };
}
