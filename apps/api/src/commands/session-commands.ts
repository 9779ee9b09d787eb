// `pnpm latchkey sessions list|end`: an operator's view of a user's sessions (docs/sessions.md). Loaded only when
// such a command runs.
import { parseArgs } from 'node:util';
import { createSessionEnding, isSessionId, listSessions } from '@latchkey/auth';
import { loadKeyMaterial } from '@latchkey/auth/tokens';
import type { Config } from '../config/load.js';
import { NotFoundError } from '../domain/errors.js';
import { createConfiguredProvider } from '../server/authorization-server.js';
import { accountIdOf, withDatabase } from './database-commands.js';
import { UsageError, requiredEmail } from './usage.js';

async function list(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { email: { type: 'string' } }, strict: true });
  const email = requiredEmail(values.email, 'sessions list');
  await withDatabase(config, async (database) => {
    const userId = await accountIdOf(database, email);
    // An operator holds no token: no session is `current`.
    for (const session of await listSessions(database.db, userId, null)) process.stdout.write(`${JSON.stringify(session)}\n`);
  });
}

/**
 * Session ids are nanoids and may begin with `-`, which node's parseArgs takes for a missing value after `--id`: the
 * word after `--id` is its value, whatever it looks like (`--id=ID` works too).
 */
function idAsValue(args: string[]): string[] {
  const joined: string[] = [];
  for (let index = 0; index < args.length; index++) {
    if (args[index] === '--id' && index + 1 < args.length) joined.push(`--id=${args[++index]}`);
    else joined.push(args[index]!);
  }
  return joined;
}

async function end(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args: idAsValue(args), options: { email: { type: 'string' }, id: { type: 'string' } }, strict: true });
  const email = requiredEmail(values.email, 'sessions end');
  if (values.id !== undefined && !isSessionId(values.id))
    throw new UsageError('sessions end: --id must be a session id (as `sessions list` prints it)');
  await withDatabase(config, async (database) => {
    const userId = await accountIdOf(database, email);
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
      onBackchannelError: (error, { clientId }) =>
        process.stderr.write(`latchkey: back-channel logout to ${clientId} failed: ${(error as Error).message}\n`),
    });
    const selection = values.id === undefined ? { allBut: null } : { only: values.id };
    const { count, notified } = await endSessions(database.db, userId, selection, { reason: 'ended by the operator' });
    await notified;
    if (values.id !== undefined && count === 0) throw new NotFoundError();
    process.stdout.write(`${JSON.stringify({ ended: count })}\n`);
  });
}

export async function sessionsCommand(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'list') return list(config, rest);
  if (sub === 'end') return end(config, rest);
  throw new UsageError('sessions: expected "list --email EMAIL" or "end --email EMAIL [--id ID]"');
}
