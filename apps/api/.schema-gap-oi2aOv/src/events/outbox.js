import { insertDocumentEvent } from '@latchkey/db';
import { WAKE_CHANNEL } from './wake.js';
/**
 * Writes the outbox row of a change (the only record of its event) and wakes the readers: on PostgreSQL with
 * `pg_notify` in the same statement (sent at commit, with nothing more to do afterwards), with Redis after the
 * commit; `wakeThisInstance` wakes this process's own reader at once, if it has one.
 *
 * The row must come after the change's own write: the transaction then already has its id when the sequence
 * number is drawn, so a reader's snapshot counts it among the transactions that may still commit that number.
 */
export function createEventRecorder(wake, wakeThisInstance = () => undefined) {
    return {
        async record(tx, kind, document) {
            const event = {
                kind,
                documentId: document.id,
                organizationId: document.organizationId,
                ownerId: document.ownerId,
                status: document.status,
                embargoUntil: document.embargoUntil ? document.embargoUntil.toISOString() : null,
            };
            await insertDocumentEvent(tx, event, wake.notifiesInTransaction ? WAKE_CHANNEL : null);
        },
        committed() {
            wakeThisInstance();
            wake.publish();
        },
    };
}
//# sourceMappingURL=outbox.js.map