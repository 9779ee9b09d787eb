import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestMemo } from '@latchkey/http';
import type { Logger } from 'pino';
import type { ServiceMetrics } from '../observability/metrics.js';

/** Per-request state, kept on the request (a memo, as every request's state is). */
interface RequestState {
  id: string;
  path: string;
  startedAt: number;
}

/** The path of a request URL, without its query string (which may carry secrets, and is never a label or a log field). */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

export interface RequestObserverOptions {
  logger: Logger;
  /** this instance's metrics; undefined: none are kept */
  metrics: ServiceMetrics | undefined;
  clientAddress: (req: IncomingMessage) => string;
}

/** Each request's id, its log line when it is answered, and its duration by route template in the metrics. */
export function createRequestObserver({ logger, metrics, clientAddress }: RequestObserverOptions) {
  const states = requestMemo<RequestState>('id, path and start of the request');
  const logRequests = logger.isLevelEnabled('info');
  const timeRequests = logRequests || metrics !== undefined;
  let routeTemplate: (path: string) => string = () => 'other';

  /** One shared listener (no closure per request): path only, since query strings may carry secrets. */
  function logRequest(this: ServerResponse): void {
    const state = states.get(this.req);
    if (!state) return;
    const ms = Math.round((performance.now() - state.startedAt) * 100) / 100;
    logger.info(
      { reqId: state.id, ip: clientAddress(this.req), method: this.req.method, path: state.path, status: this.statusCode, ms },
      'request',
    );
  }

  /** One shared listener too: by route template, never by path; `aborted` when the client left before the answer. */
  function observeRequest(this: ServerResponse): void {
    const state = states.get(this.req);
    if (!state || !metrics) return;
    metrics.observeHttp(
      routeTemplate(state.path),
      this.writableFinished ? this.statusCode : 'aborted',
      (performance.now() - state.startedAt) / 1000,
    );
  }

  return {
    /** A request arrived: its id and path are kept, its answer will be logged and measured. */
    begin(req: IncomingMessage, res: ServerResponse, id: string, path: string): void {
      states.set(req, { id, path, startedAt: timeRequests ? performance.now() : 0 });
      if (logRequests) res.once('finish', logRequest);
      // 'close' comes once, after 'finish' or when the connection is lost first: `on` needs no wrapper per request.
      if (metrics) res.on('close', observeRequest);
    },
    requestIdOf: (req: IncomingMessage): string | undefined => states.get(req)?.id,
    /** the route table's labels (the table is built after the handlers that log through this observer) */
    labelWith(templateOf: (path: string) => string): void {
      routeTemplate = templateOf;
    },
  };
}
