import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import type { IncomingMessage } from 'node:http';
import WebSocket, { type ClientOptions } from 'ws';

/** What one subscription received: each `next` payload, the error it ended with, and whether it completed. */
export interface Received {
  results: {
    data?: any;
    errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
    extensions?: Record<string, unknown>;
  }[];
  /** the error the client was told (graphql-ws `error` message, a close event, or an HTTP refusal) */
  error?: unknown;
  completed: boolean;
  /** stops the subscription from the client's side */
  dispose(): void;
  /** resolves once `count` results have arrived (or rejects after `timeoutMs`) */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  /** resolves once the subscription has ended (completed or errored) */
  ended(timeoutMs?: number): Promise<void>;
}

interface Payload {
  query: string;
  variables?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
}

function until(check: () => boolean, timeoutMs: number, what: string | (() => string)): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = () => {
      if (check()) return resolve();
      if (Date.now() - started > timeoutMs) return reject(new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`));
      setTimeout(poll, 10);
    };
    poll();
  });
}

type Subscribe = (payload: Payload, sink: { next(value: any): void; error(error: unknown): void; complete(): void }) => () => void;

function track(subscribe: Subscribe, payload: Payload): Received {
  const received: Received = {
    results: [],
    completed: false,
    dispose: () => undefined,
    waitFor: (count, timeoutMs = 10_000) =>
      until(
        () => received.results.length >= count,
        timeoutMs,
        () => `${count} results (have ${received.results.length})`,
      ),
    ended: (timeoutMs = 10_000) =>
      until(() => received.completed || received.error !== undefined, timeoutMs, 'the end of the subscription'),
  };
  received.dispose = subscribe(payload, {
    next: (value) => received.results.push(value),
    error: (error) => (received.error = error),
    complete: () => (received.completed = true),
  });
  return received;
}

/**
 * A graphql-ws client (the protocol's reference client, over `ws`) with the token in connectionParams. `options`
 * go to `ws` as they are (headers, and for a proxy in front: ca, servername, localAddress; ws passes servername on
 * to tls.connect, though its types omit it).
 */
export function wsClient(
  graphqlUrl: string,
  token?: string,
  options: ClientOptions & { servername?: string } = {},
): WsClient & { on: WsClient['on'] } {
  const url = graphqlUrl.replace(/^http/, 'ws');
  return createWsClient({
    url,
    webSocketImpl: class extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, options);
      }
    },
    connectionParams: token ? { authorization: `Bearer ${token}` } : undefined,
    retryAttempts: 0,
    lazy: true,
  });
}

/** Subscribes through a graphql-ws client. */
export function overWebSocket(client: WsClient, payload: Payload): Received {
  return track((p, sink) => client.subscribe(p, sink), payload);
}

/** A graphql-sse client in distinct-connections mode (each subscription a POST with Accept: text/event-stream). */
export function sseClient(graphqlUrl: string, token?: string) {
  return createSseClient({
    url: graphqlUrl,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
  });
}

/** Subscribes through a graphql-sse client. */
export function overSse(client: ReturnType<typeof sseClient>, payload: Payload): Received {
  return track((p, sink) => client.subscribe(p, sink), payload);
}

/**
 * Subscribes over SSE (distinct connections: one POST with Accept: text/event-stream per subscription) on a
 * response the test opens itself, e.g. through a proxy from a chosen address (NodeBrowser.open).
 */
export function overEventStream(open: (payload: Payload) => Promise<IncomingMessage>, payload: Payload): Received {
  return track((p, sink) => {
    let response: IncomingMessage | undefined;
    let disposed = false;
    open(p).then(
      (res) => {
        response = res;
        if (disposed) return void res.destroy();
        if (res.statusCode !== 200) {
          res.resume();
          return sink.error(new Error(`the event stream answered ${res.statusCode}`));
        }
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
            const lines = buffered.slice(0, end).split('\n');
            buffered = buffered.slice(end + 2);
            const event = lines
              .find((line) => line.startsWith('event:'))
              ?.slice(6)
              .trim();
            const data = lines
              .filter((line) => line.startsWith('data:'))
              .map((line) => line.slice(5).trimStart())
              .join('\n');
            if (event === 'next') sink.next(JSON.parse(data));
            if (event === 'complete') sink.complete();
          }
        });
        res.on('end', () => sink.complete());
        res.on('error', (error) => sink.error(error));
      },
      (error: unknown) => sink.error(error),
    );
    return () => {
      disposed = true;
      response?.destroy();
    };
  }, payload);
}

/**
 * Resolves once the number of subscriptions a server holds (its SubscriptionHub) satisfies `enough`: a server
 * opens a subscription some time after the client sent it, and only events from then on reach it.
 */
export function untilOpen(hub: { size(): number }, enough: (open: number) => boolean, timeoutMs = 30_000): Promise<void> {
  return until(
    () => enough(hub.size()),
    timeoutMs,
    () => `the open subscriptions (${hub.size()} now)`,
  );
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
