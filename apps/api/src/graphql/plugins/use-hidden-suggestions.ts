import type { IncomingMessage } from 'node:http';
import { GraphQLError, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { handleMaybePromise } from '@whatwg-node/promise-helpers';

/** graphql-js's suggestions: ` Did you mean "a", "b", or "c"?`, `... the enum value "X"?`, `... to use an inline fragment on "T"?` */
const SUGGESTION = / ?Did you mean [^?]*\?/g;

export interface HiddenSuggestionsOptions {
  /** Who may run introspection (INTROSPECTION): whoever may not gets no suggestions either. */
  introspection: 'open' | 'signed-in' | 'off';
  /** Whether the credential of an HTTP request verifies (answered without a promise when it is cached). */
  signedIn: (req: IncomingMessage) => boolean | Promise<boolean>;
}

/** Whether someone may see suggestions under an introspection setting. */
export function suggestionsAllowed(introspection: HiddenSuggestionsOptions['introspection'], signedIn: boolean): boolean {
  return introspection === 'open' || (introspection === 'signed-in' && signedIn);
}

const suggests = (error: { message: string }) => error.message.includes('Did you mean');

/**
 * The same errors without their "Did you mean ...?" suggestions, which let a tool rebuild a schema whose
 * introspection is refused. New error objects: Yoga's validation cache keeps the originals for callers who may
 * see them. undefined when no error suggests anything.
 */
export function withoutSuggestions(errors: readonly GraphQLError[]): GraphQLError[] | undefined {
  if (!errors.some(suggests)) return undefined;
  return errors.map((error) =>
    suggests(error)
      ? new GraphQLError(error.message.replace(SUGGESTION, ''), {
          nodes: error.nodes,
          source: error.source,
          positions: error.positions,
          path: error.path,
          originalError: error.originalError,
          extensions: error.extensions,
        })
      : error,
  );
}

/**
 * Validation and variable-coercion messages over HTTP without suggestions where introspection is refused:
 * a guest's under `signed-in`, everyone's under `off` (graphql 16 cannot turn suggestions off; graphql 17's
 * `hideSuggestions` can). Both kinds of failure end as a result with errors and no data, so they are
 * rewritten once, as the result is processed; the caller's token is looked at only then. (WebSocket
 * operations do the same in graphql-ws.ts.)
 */
export function useHiddenSuggestions(options: HiddenSuggestionsOptions): Plugin {
  const { introspection, signedIn } = options;
  if (introspection === 'open') return {};
  /** A result with errors and no data (failed validation or coercion) without its suggestions; undefined: unchanged. */
  const hide = (result: unknown): ExecutionResult | undefined => {
    if (!result || typeof result !== 'object' || !('errors' in result) || 'data' in result) return undefined;
    const errors = withoutSuggestions((result as ExecutionResult).errors ?? []);
    return errors && { ...(result as ExecutionResult), errors };
  };
  const hideAll = (results: unknown[]): unknown[] | undefined => {
    const hidden = results.map((result) => hide(result) ?? result);
    return hidden.some((result, index) => result !== results[index]) ? hidden : undefined;
  };
  return {
    onResultProcess({ result, setResult, serverContext }) {
      const hidden = Array.isArray(result) ? hideAll(result) : hide(result);
      if (!hidden) return;
      const req = (serverContext as { req?: IncomingMessage }).req;
      if (introspection === 'off' || !req) return void setResult(hidden as never);
      return handleMaybePromise(
        () => signedIn(req),
        (yes) => void (yes || setResult(hidden as never)),
      );
    },
  };
}
