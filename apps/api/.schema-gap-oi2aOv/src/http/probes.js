import { sendHttpError, sendJson } from '@latchkey/http';
/** `/healthz` and `/readyz`, answered alike by every listener (the metrics listener included). */
export function createProbes(database, draining) {
    return {
        health(res) {
            sendJson(res, 200, { status: 'ok' });
        },
        /** Ready to take traffic: not shutting down, and the database answers. */
        async readiness(res) {
            if (draining())
                return sendHttpError(res, 503, 'The service is shutting down.');
            if (await database.ping(1000))
                sendJson(res, 200, { status: 'ok', database: database.kind });
            else
                sendHttpError(res, 503, 'The database is unreachable.');
        },
    };
}
//# sourceMappingURL=probes.js.map