// `pnpm latchkey sessions list|end`: an operator's view of a user's sessions (docs/sessions.md). Loaded only when
// such a command runs.
import { parseArgs } from 'node:util';
import { createSessionEnding, isSessionId, listSessions } from '@latchkey/auth';
import { loadKeyMaterial } from '@latchkey/auth/tokens';
import { findUserIdByEmail, runMigrations } from '@latchkey/db';
import { NotFoundError } from '../domain/errors.js';
import { createConfiguredProvider } from '../http/authorization-server.js';
import { withDatabase } from './database-commands.js';
import { UsageError } from './usage.js';
/** The account with this e-mail address; an unknown one exits 4, like an unknown session. */
async function accountOf(database, email, command) {
    if (!email?.trim())
        throw new UsageError(`sessions ${command}: --email EMAIL is required`);
    await runMigrations(database);
    const userId = await findUserIdByEmail(database.db, email.trim().toLowerCase());
    if (!userId)
        throw new NotFoundError();
    return userId;
}
async function list(config, args) {
    const { values } = parseArgs({ args, options: { email: { type: 'string' } }, strict: true });
    await withDatabase(config, async (database) => {
        const userId = await accountOf(database, values.email, 'list');
        // An operator holds no token: no session is `current`.
        for (const session of await listSessions(database.db, userId, null))
            process.stdout.write(`${JSON.stringify(session)}\n`);
    });
}
async function end(config, args) {
    const { values } = parseArgs({ args, options: { email: { type: 'string' }, id: { type: 'string' } }, strict: true });
    if (values.id !== undefined && !isSessionId(values.id))
        throw new UsageError('sessions end: --id must be a session id (as `sessions list` prints it)');
    await withDatabase(config, async (database) => {
        const userId = await accountOf(database, values.email, 'end');
        const keys = await loadKeyMaterial({
            signingKey: config.keys.signingKey,
            verifyKeys: config.keys.verifyKeys,
            dataDir: config.dataDir,
            production: config.env === 'production',
        });
        // The provider only signs and sends the back-channel logout tokens; running servers learn of the ended
        // sessions from the table within a second.
        const endSessions = createSessionEnding({
            accessTokenTtlSeconds: config.tokens.accessTokenTtlSeconds,
            clockSkewSeconds: config.tokens.clockSkewSeconds,
            provider: await createConfiguredProvider(config, keys, database),
            onBackchannelError: (error, { clientId }) => process.stderr.write(`latchkey: back-channel logout to ${clientId} failed: ${error.message}\n`),
        });
        const { count, notified } = await endSessions(database.db, userId, values.id === undefined ? { allBut: null } : { only: values.id });
        await notified;
        if (values.id !== undefined && count === 0)
            throw new NotFoundError();
        process.stdout.write(`${JSON.stringify({ ended: count })}\n`);
    });
}
export async function sessionsCommand(config, args) {
    const [sub, ...rest] = args;
    if (sub === 'list')
        return list(config, rest);
    if (sub === 'end')
        return end(config, rest);
    throw new UsageError('sessions: expected "list --email EMAIL" or "end --email EMAIL [--id ID]"');
}
//# sourceMappingURL=session-commands.js.map