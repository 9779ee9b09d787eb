import type { ServerResponse } from 'node:http';
import type { DatabaseHandle } from '@latchkey/db';
import { sendHttpError, sendJson } from '@latchkey/http';

/** `/healthz` and `/readyz`, answered alike by every listener (the metrics listener included). */
export function createProbes(database: DatabaseHandle, draining: () => boolean) {
  return {
    health(res: ServerResponse): void {
      sendJson(res, 200, { status: 'ok' });
    },
    /** Ready to take traffic: not shutting down, and the database answers. */
    async readiness(res: ServerResponse): Promise<void> {
      if (draining()) return sendHttpError(res, 503, 'The service is shutting down.');
      if (await database.ping(1000)) sendJson(res, 200, { status: 'ok', database: database.kind });
      else sendHttpError(res, 503, 'The database is unreachable.');
    },
  };
}

export type Probes = ReturnType<typeof createProbes>;
