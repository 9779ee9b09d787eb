import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { QUERY_CHANNEL } from '@latchkey/db';
/** The SQL statements the server sends while `run` executes (published by packages/db on QUERY_CHANNEL). */
export async function statementsDuring(run) {
    const statements = [];
    const listener = (message) => statements.push(message.sql);
    subscribe(QUERY_CHANNEL, listener);
    try {
        return { result: await run(), statements };
    }
    finally {
        unsubscribe(QUERY_CHANNEL, listener);
    }
}
//# sourceMappingURL=statements.js.map