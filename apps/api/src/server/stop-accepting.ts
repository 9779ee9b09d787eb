import type { Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { Server as NetServer } from 'node:net';

/**
 * Stops taking new connections and keeps the open ones; resolves once every one of them has ended. node's own
 * `http.Server#close()` also closes idle keep-alive connections at once, and a client that reuses one at that
 * instant sees a reset: here an idle connection ends only when its keep-alive timeout passes (or the caller
 * closes it as a deadline nears), and a busy one after the response that carries `Connection: close`.
 */
export function stopAccepting(server: Server | HttpsServer): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    NetServer.prototype.close.call(server, () => resolve());
  });
}
