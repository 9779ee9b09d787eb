import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
/** The development outbox of a service's DATA_DIR, read as a test reads a mailbox. */
export function outboxOf(dataDir) {
    const dir = path.join(dataDir, 'outbox');
    const messages = () => existsSync(dir)
        ? readdirSync(dir)
            .filter((name) => name.endsWith('.json'))
            .sort()
            .map((name) => JSON.parse(readFileSync(path.join(dir, name), 'utf8')))
        : [];
    return {
        count: () => messages().length,
        /**
         * The newest message (to `to`, when given) among those after the first `after`, once it has arrived: delivery
         * happens after the answer is sent, so messages of earlier requests may still be arriving.
         */
        async next(after, to) {
            for (let i = 0; i < 100; i++) {
                const arrived = messages()
                    .slice(after)
                    .filter((message) => to === undefined || message.to === to);
                if (arrived.length > 0)
                    return arrived.at(-1);
                await new Promise((resolve) => setTimeout(resolve, 50));
            }
            throw new Error('no message arrived in the outbox');
        },
    };
}
/** The token of a magic link. */
export const tokenOf = (message) => new URL(message.magicLink).searchParams.get('token');
//# sourceMappingURL=outbox.js.map