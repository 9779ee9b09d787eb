import type { IncomingMessage } from 'node:http';
import { type RequestMemo, requestMemo } from '@latchkey/http';
import type { Duplex } from 'node:stream';
import {
  runsPersistedOperation,
  type PersistedOperation,
  type PersistedRequestResolver,
  type RegistrationDecision,
} from '@latchkey/persisted';
import { GraphQLError, type DocumentNode, type ExecutionArgs } from 'graphql';
import {
  CloseCode,
  handleProtocols,
  makeServer,
  type ConnectionInitMessage,
  type Context,
  type Server,
  type SubscribePayload,
} from 'graphql-ws';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '@latchkey/db';
import { WebSocketServer, type WebSocket } from 'ws';
import type { GraphQLContext } from '../graphql/context.js';
import { ErrorCode, unauthenticated } from '../graphql/errors.js';
import { suggestionsAllowed, withoutSuggestions, type HiddenSuggestionsOptions } from '../graphql/plugins/use-hidden-suggestions.js';
import type { RouteRules } from '@latchkey/policy';
import type { GraphQLHandler } from '../graphql/yoga.js';
import { authorizationOfConnection, callerFrom, type AccessTokenVerifier, type CallerResolution } from '@latchkey/auth/tokens';

export interface GraphQLWebSocketOptions {
  yoga: GraphQLHandler;
  verifier: AccessTokenVerifier;
  /** each operation's caller (the same resolution as over HTTP) */
  callers: CallerResolution<GraphQLContext>;
  /** what a guest may see (the same route rules as over HTTP) */
  routeRules: RouteRules;
  logger: Logger;
  /** the persisted-operation rules of the HTTP endpoint (allowlist included) */
  persisted: PersistedRequestResolver;
  allowRegistration: (ip: string) => Promise<RegistrationDecision>;
  /** the client's address (TRUST_PROXY decides whose forwarded headers count) */
  clientAddress: (req: IncomingMessage) => string;
  /** origins a browser may open the socket from (PUBLIC_URL's and CORS_ORIGINS); requests without Origin pass */
  allowedOrigins: ReadonlySet<string>;
  /** who may run introspection: whoever may not gets no "Did you mean ...?" suggestions either */
  introspection: HiddenSuggestionsOptions['introspection'];
  /** the largest message a client may send (ws closes with 1009 beyond it). @default 65536 */
  maxMessageBytes?: number;
  /** operations one connection may have open at once. @default 10 */
  maxOperationsPerConnection?: number;
  /** how long a client has to send connection_init. @default 10000 */
  connectionInitWaitMs?: number;
  /** ping interval; a client that does not answer in as long is dropped. @default 12000 */
  keepAliveMs?: number;
}

const refusal = (code: string, message: string) => [new GraphQLError(message, { extensions: { code } })];

/**
 * An error as the socket sends it: `extensions` without `http` (the status and headers a refusal has over HTTP,
 * which Yoga applies and strips there), so a WebSocket refusal carries its `code` (and step-up's RFC 9470
 * fields) exactly as the same refusal does over HTTP.
 */
function withoutHttp(error: GraphQLError): GraphQLError {
  if (error.extensions?.['http'] === undefined) return error;
  const { http: _http, ...extensions } = error.extensions;
  const { nodes, source, positions, path, originalError } = error;
  return new GraphQLError(error.message, { nodes, source, positions, path, originalError, extensions });
}
const socketErrors = (errors: readonly GraphQLError[]) => errors.map(withoutHttp);

const SERVICE_UNAVAILABLE_REASON = 'Service unavailable: try again shortly.';

type SocketExtra = { socket: WebSocket; request: IncomingMessage };
type SocketContext = Context<ConnectionInitMessage['payload'], SocketExtra>;

/** What the protocol's callbacks share: the options, and what each connection proved at connection_init. */
interface ConnectionState {
  options: GraphQLWebSocketOptions;
  maxOperations: number;
  log: Logger;
  /** The Authorization value each connection signed in with (checked at connection_init, re-checked per operation). */
  credentials: RequestMemo<string>;
  /** The key each DPoP connection proved at connection_init (its operations carry no proof of their own). */
  provenKeys: RequestMemo<string>;
}

/**
 * A subscribe message: the persisted-operation rules, parse and validation, the context, and the route-level check;
 * the execution arguments, or the errors the protocol sends back.
 */
async function subscribeOperation(
  state: ConnectionState,
  ctx: SocketContext,
  payload: SubscribePayload,
): Promise<ExecutionArgs | readonly GraphQLError[]> {
  const { options, maxOperations, log, credentials, provenKeys } = state;
  const { yoga, persisted, routeRules, callers } = options;
  if (Object.keys(ctx.subscriptions).length > maxOperations) {
    return refusal(ErrorCode.RATE_LIMITED, `At most ${maxOperations} operations may be open on one connection.`);
  }
  const ip = options.clientAddress(ctx.extra.request);
  let query = payload.query;
  let register: { hash: string; query: string } | undefined;
  let known: PersistedOperation | undefined;
  try {
    // graphql-ws requires a string `query`: a client naming a persisted operation sends an empty one.
    const resolution = await persisted.resolve(
      {
        query: payload.query === '' ? undefined : payload.query,
        extensions: payload.extensions,
        documentId: (payload as { documentId?: unknown }).documentId,
      },
      () => options.allowRegistration(ip),
    );
    if (resolution.kind === 'known') {
      known = resolution.operation;
      query = known.query;
    }
    if (resolution.kind === 'register') register = resolution;
  } catch (error) {
    if (error instanceof GraphQLError) return [error];
    throw error;
  }
  if (typeof query !== 'string' || query === '')
    return refusal(ErrorCode.BAD_REQUEST, 'A subscribe message needs "query" (or a persisted operation\'s id).');
  const params = {
    query,
    variables: payload.variables ?? undefined,
    operationName: payload.operationName ?? undefined,
    extensions: payload.extensions ?? undefined,
  };
  if (known) runsPersistedOperation(params, known);
  const enveloped = yoga.getEnveloped({
    req: ctx.extra.request,
    params,
    connectionAuthorization: credentials.get(ctx) ?? null,
    connectionProvenKey: provenKeys.get(ctx),
  });
  let document: DocumentNode;
  try {
    document = enveloped.parse(query);
  } catch (error) {
    if (error instanceof GraphQLError) return [error];
    throw error;
  }
  const errors = enveloped.validate(enveloped.schema, document);
  if (errors.length > 0) return errors;
  if (register)
    await persisted.register(register).catch((error: unknown) => log.error({ err: error }, 'persisted-query registration failed'));
  let contextValue: GraphQLContext;
  try {
    contextValue = (await enveloped.contextFactory()) as GraphQLContext;
  } catch (error) {
    if (error instanceof GraphQLError) return [error]; // e.g. SERVICE_UNAVAILABLE: the caller's session cannot be judged now
    throw error;
  }
  // Route level, before anything runs: a guest asking for more than @public fields gets the protocol's
  // Error message (the same refusal the route check gives over HTTP), not a result.
  if (contextValue.caller === null && routeRules.requirementsOf(enveloped.schema, document, params.operationName).signIn) {
    return [unauthenticated(callers.challengeOf(contextValue))];
  }
  const args: ExecutionArgs = {
    schema: enveloped.schema,
    document,
    operationName: params.operationName,
    variableValues: params.variables,
    contextValue,
    rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
  };
  return args;
}

/** The errors of an operation, as sent: without `http`, and without suggestions where introspection is refused. */
async function connectionErrors(
  { options, credentials, provenKeys }: ConnectionState,
  ctx: SocketContext,
  given: readonly GraphQLError[],
): Promise<readonly GraphQLError[]> {
  const errors = socketErrors(given);
  if (options.introspection === 'open') return errors;
  const credential = credentials.get(ctx);
  const signedIn =
    credential !== undefined &&
    (await Promise.resolve()
      .then(() => {
        const provenKey = provenKeys.get(ctx);
        const dpop = () => (provenKey === undefined ? undefined : { proof: undefined, method: 'GET', path: '/graphql', provenKey });
        return callerFrom(options.verifier, { authorization: credential, dpop });
      })
      .then(
        (result) => result?.ok === true,
        () => false,
      ));
  return suggestionsAllowed(options.introspection, signedIn) ? errors : (withoutSuggestions(errors) ?? errors);
}

/** One accepted socket: errors logged, kept alive by pings, and handed to the protocol server. */
function serveSocket(server: Server<SocketExtra>, socket: WebSocket, request: IncomingMessage, log: Logger, keepAliveMs: number): void {
  socket.once('error', (error) => {
    log.warn({ err: error }, 'websocket error');
    socket.close(CloseCode.InternalServerError, 'Internal server error');
  });
  // Keep-alive: a peer that stops answering pings is dropped, so its subscriptions end.
  let alive = true;
  socket.on('pong', () => (alive = true));
  const ping = setInterval(() => {
    if (!alive) return void socket.terminate();
    alive = false;
    socket.ping();
  }, keepAliveMs);
  ping.unref();
  const closed = server.opened(
    {
      protocol: socket.protocol,
      send: (data) =>
        new Promise<void>((resolve, reject) => {
          if (socket.readyState !== socket.OPEN) return resolve();
          // Resolves once written out: a client that does not read holds its subscriptions back (bounded queues).
          socket.send(data, (error) => (error ? reject(error) : resolve()));
        }),
      close: (code, reason) => socket.close(code, reason),
      onMessage: (handle) =>
        socket.on('message', async (data, isBinary) => {
          try {
            await handle(isBinary ? '' : String(data));
          } catch (error) {
            if (isDatabaseUnavailable(error)) {
              log.warn({ reason: (error as Error).message }, 'graphql-ws: data store unavailable');
              return void socket.close(CloseCode.InternalServerError, SERVICE_UNAVAILABLE_REASON);
            }
            log.error({ err: error }, 'graphql-ws message handling failed');
            socket.close(CloseCode.InternalServerError, 'Internal server error');
          }
        }),
    },
    { socket, request },
  );
  socket.once('close', (code, reason) => {
    clearInterval(ping);
    void closed(code, String(reason));
  });
}

/**
 * GraphQL over WebSocket (the graphql-ws protocol) on `/graphql`: subscriptions, and queries and mutations too.
 * This path does not pass through Yoga's HTTP plugins, so it applies their rules itself: the origin allow-list
 * (browsers), a message size limit, the persisted-operation mode (allowlist included) and registration budget,
 * and the same parse/validation limits (Yoga's enveloped parse and validate carry them). The bearer token
 * comes in `connectionParams.authorization`; a token that does not verify closes the socket with 4403. Each
 * operation's context is built by the same context factory as HTTP requests, so route access, field rules,
 * step-up and per-event checks apply unchanged.
 */
export function createGraphQLWebSocket(options: GraphQLWebSocketOptions) {
  const { verifier, logger } = options;
  const maxOperations = options.maxOperationsPerConnection ?? 10;
  const keepAliveMs = options.keepAliveMs ?? 12_000;
  const log = logger.child({ component: 'graphql-ws' });
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxMessageBytes ?? 65_536,
    handleProtocols: (protocols) => handleProtocols(protocols),
  });
  const credentials = requestMemo<string>("the connection's credential");
  const provenKeys = requestMemo<string>("the key the connection's DPoP proof proved");
  const state: ConnectionState = { options, maxOperations, log, credentials, provenKeys };

  const server = makeServer<ConnectionInitMessage['payload'], SocketExtra>({
    connectionInitWaitTimeout: options.connectionInitWaitMs ?? 10_000,
    async onConnect(ctx) {
      // A session that cannot be judged now throws: the connection closes (4500) saying so (below), nothing about why.
      const verified = await callerFrom(verifier, { connectionParams: ctx.connectionParams });
      if (verified === undefined) return true; // a guest: public fields only
      if (!verified.ok) return false; // 4403 Forbidden: nothing about why
      credentials.set(ctx, authorizationOfConnection(ctx.connectionParams) as string);
      // A DPoP-bound token proved its key here (connectionParams.dpop, single use): the connection stays bound to it.
      if (verified.caller.boundKey !== null) provenKeys.set(ctx, verified.caller.boundKey);
      return true;
    },
    onSubscribe: (ctx, _id, payload) => subscribeOperation(state, ctx, payload),
    // No suggestions where introspection is refused (as useHiddenSuggestions over HTTP): in validation errors,
    // judged by the connection's credential as it stands now, and in variable-coercion results.
    onError: (ctx, _id, _payload, given) => connectionErrors(state, ctx, given),
    onNext(_ctx, _id, _payload, args, result) {
      if (!result.errors) return undefined;
      const errors = socketErrors(result.errors);
      if ('data' in result || options.introspection === 'open') return { ...result, errors };
      if (suggestionsAllowed(options.introspection, (args.contextValue as GraphQLContext).caller !== null)) return { ...result, errors };
      return { ...result, errors: withoutSuggestions(errors) ?? errors };
    },
    execute: (args) => (args.rootValue as { execute: typeof import('graphql').execute }).execute(args),
    subscribe: (args) => (args.rootValue as { subscribe: typeof import('graphql').subscribe }).subscribe(args),
  });

  wss.on('connection', (socket: WebSocket, request: IncomingMessage) => serveSocket(server, socket, request, log, keepAliveMs));

  /** Takes over an upgrade request for `/graphql`; refuses a browser origin that is not allowed. */
  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const origin = req.headers.origin;
    if (origin !== undefined && !options.allowedOrigins.has(origin)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  }

  /** Every socket gets 1001 Going Away (its subscriptions end); no new ones are taken. */
  async function close(): Promise<void> {
    for (const client of wss.clients) client.close(1001, 'Going away');
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  }

  /** Sockets whose client never answered the close handshake are cut (shutdown deadline). */
  function terminate(): void {
    for (const client of wss.clients) client.terminate();
  }

  return { handleUpgrade, close, terminate, clients: () => wss.clients.size };
}
