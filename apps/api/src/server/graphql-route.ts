import type { IncomingMessage, ServerResponse } from 'node:http';
import { acceptable, acceptableContentType, BodyTooLargeError, readBody, sendGraphQLRequestError, sendHttpError } from '@latchkey/http';
import type { Logger } from 'pino';
import type { Config } from '../config/load.js';
import { ErrorCode } from '../graphql/errors.js';
import type { graphiQLPage } from '../graphql/graphiql-page.js';
import type { createGraphQLHandler } from '../graphql/yoga.js';
import type { createCors } from './cors.js';

/** The methods `/graphql` answers: queries by GET, anything by POST, CORS preflights by OPTIONS. */
export const GRAPHQL_METHODS = ['GET', 'POST', 'OPTIONS'] as const;

export interface GraphQLRouteOptions {
  yoga: ReturnType<typeof createGraphQLHandler>;
  cors: ReturnType<typeof createCors>;
  limits: Config['limits'];
  /** the GraphiQL page (GRAPHIQL on); undefined: none */
  graphiql: typeof graphiQLPage | undefined;
  logger: Logger;
  requestIdOf: (req: IncomingMessage) => string | undefined;
}

/**
 * `/graphql` over HTTP: the transport rules (CORS, caching, URL and body limits, Accept, the CSRF content-type
 * rule) are applied here in plain node:http, before Yoga, where they cost the least. Its refusals are GraphQL
 * error envelopes, so it checks the method itself.
 */
export function createGraphQLRoute({ yoga, cors, limits, graphiql, logger, requestIdOf }: GraphQLRouteOptions) {
  function tooLarge(req: IncomingMessage, res: ServerResponse): void {
    // The rest of the body is read and thrown away within a bound, then the connection closes (discardBody).
    sendGraphQLRequestError(req, res, 413, ErrorCode.PAYLOAD_TOO_LARGE, `The request body is larger than ${limits.maxBodyBytes} bytes.`);
  }

  return function graphql(req: IncomingMessage, res: ServerResponse): void {
    if (req.method === 'OPTIONS') return cors.preflight(req, res);
    cors.apply(req, res);
    // No GraphQL answer is stored by a shared cache (spec Authorization 14); one that depends on a credential
    // is private as well. (Public caching of @public GET queries belongs to the persisted-query layer.)
    if (req.headers.authorization) {
      res.setHeader('cache-control', 'private, no-store');
      res.setHeader('vary', 'Origin, Authorization');
    } else {
      res.setHeader('cache-control', 'no-store');
    }
    if (req.url!.length > limits.maxUrlBytes) {
      return sendGraphQLRequestError(
        req,
        res,
        414,
        ErrorCode.PAYLOAD_TOO_LARGE,
        `The request URL is longer than ${limits.maxUrlBytes} bytes: send the query by POST or as a persisted query.`,
      );
    }
    if (!acceptable(req, graphiql !== undefined)) {
      return sendGraphQLRequestError(
        req,
        res,
        406,
        ErrorCode.BAD_REQUEST,
        'Accept must allow application/graphql-response+json or application/json.',
      );
    }
    if (req.method === 'GET') {
      // The GraphiQL page (a browser's GET): no script, style or request of any other origin.
      if (graphiql && req.headers.accept?.includes('text/html')) {
        void graphiql().then(
          (page) => {
            res.setHeader('content-security-policy', page.contentSecurityPolicy());
            return yoga(req, res);
          },
          (error: unknown) => {
            logger.error({ err: error }, 'the GraphiQL page could not be rendered');
            sendHttpError(res, 500, 'Internal Server Error');
          },
        );
        return;
      }
      void yoga(req, res);
      return;
    }
    if (req.method !== 'POST') {
      return sendGraphQLRequestError(req, res, 405, ErrorCode.METHOD_NOT_ALLOWED, 'GraphQL requests use GET (queries) or POST.', {
        allow: GRAPHQL_METHODS.join(', '),
      });
    }
    // CSRF (spec Cross-site 2): only JSON bodies, which a cross-site form cannot send without a preflight.
    if (!acceptableContentType(req.headers['content-type'])) {
      return sendGraphQLRequestError(req, res, 415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'POST bodies must be application/json (UTF-8).', {
        accept: 'application/json',
      });
    }
    // Yoga matches content types case-sensitively and knows no graphql-response+json body: hand it the canonical form.
    req.headers['content-type'] = 'application/json';
    const declared = req.headers['content-length'];
    if (declared !== undefined) {
      if (Number(declared) > limits.maxBodyBytes) return tooLarge(req, res);
      // node:http never delivers more than Content-Length: Yoga may stream the body itself.
      void yoga(req, res);
      return;
    }
    // Chunked: count the bytes while reading, then hand Yoga the buffered body.
    readBody(req, limits.maxBodyBytes).then(
      (body) => {
        // @whatwg-node/server uses a pre-read body instead of the (now consumed) stream.
        (req as IncomingMessage & { body?: Buffer }).body = body;
        void yoga(req, res);
      },
      (error: unknown) => {
        if (error instanceof BodyTooLargeError) return tooLarge(req, res);
        logger.debug({ reqId: requestIdOf(req), err: error }, 'request body aborted');
        if (!res.headersSent) sendHttpError(res, 400, 'The request body could not be read.');
      },
    );
  };
}
