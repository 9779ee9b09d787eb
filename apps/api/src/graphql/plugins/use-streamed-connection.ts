import { processRegularResult, type Plugin } from 'graphql-yoga';
import { handleMaybePromise } from '@whatwg-node/promise-helpers';

type ResultProcessor = Parameters<Parameters<NonNullable<Plugin['onResultProcess']>>[0]['setResultProcessor']>[0];

const withoutConnectionHeader = (response: Response): Response => {
  response.headers.delete('connection');
  return response;
};

/**
 * Yoga's SSE and multipart/mixed processors set `Connection: keep-alive` on their answers, which node then
 * obeys even when the client asked for `close` (it answers keep-alive and keeps the connection open). The
 * header is removed from those answers so node decides as for every other answer: `close` when the client
 * (or the server) wants the connection to end, keep-alive otherwise. Single JSON answers, the hot path, are
 * left at the first comparison.
 */
export function useStreamedConnection(): Plugin {
  const wrapped = new WeakMap<ResultProcessor, ResultProcessor>();
  const wrap = (processor: ResultProcessor): ResultProcessor => {
    let wrapper = wrapped.get(processor);
    if (!wrapper) {
      wrapper = (result, fetchAPI, acceptedMediaType) => {
        return handleMaybePromise(() => processor(result, fetchAPI, acceptedMediaType), withoutConnectionHeader);
      };
      wrapped.set(processor, wrapper);
    }
    return wrapper;
  };
  return {
    onResultProcess({ resultProcessor, setResultProcessor }) {
      if (!resultProcessor || resultProcessor === processRegularResult) return;
      // The streamed processors ignore the accepted media type (only the regular one writes it as Content-Type).
      setResultProcessor(wrap(resultProcessor), 'text/event-stream');
    },
  };
}
