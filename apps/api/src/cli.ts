// `pnpm latchkey`: the operator's commands. Only what every command needs is loaded up front (configuration, keys,
// token minting): the database, the domain and the policies load when a command uses them, so `keygen` and
// `token --sub` answer without them.
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { API_SCOPE_NAMES, EVERY_API_SCOPE, isApiScope, issuedAmrValues, OPENID_SCOPES } from '@latchkey/auth/configuration';
import { ConfigError, loadConfig, parseDurationSeconds, type Config } from './config/load.js';
import { COMMANDS, didYouMean, helpFor, optionsOf, USAGE, UsageError } from './commands/usage.js';
import { generateSigningJwk, KeyMaterialError, loadKeyMaterial, mintAccessToken } from '@latchkey/auth/tokens';
import { readVersion } from './version.js';
import { isCodedError } from '@latchkey/errors';

// A command runs a few statements and exits: V8's optimising tier for the embedded database's 9 MB of WebAssembly
// cost more CPU than it ever saved here (`documents` on PGlite: 2.6 -> 1.9 CPU-s, 1.8 -> 1.5 s). Liftoff, V8's
// baseline compiler, is enough for a short process. Set before anything compiles WebAssembly (the database loads
// with the command that needs it); the long-running server keeps the optimising tier.
setFlagsFromString('--liftoff-only');

/** `--amr otp,swk`: only values the server issues, each once; an empty one is refused too (every sign-in has a method). */
function amrValues(list: string, config: Config): string[] {
  const issued = issuedAmrValues(config.auth.factors);
  const values = list.split(',').map((value) => value.trim());
  const wrong = values.find((value) => !issued.includes(value));
  if (wrong !== undefined)
    throw new UsageError(`token: --amr ${JSON.stringify(wrong)} is not a method this server issues (${issued.join(', ')})`);
  const twice = values.find((value, index) => values.indexOf(value) !== index);
  if (twice !== undefined) throw new UsageError(`token: --amr names ${twice} twice (each of ${issued.join(', ')} at most once)`);
  return values;
}

/**
 * `--scope "openid documents:read"`: the API scopes it names, or every API scope when it names none (OpenID scopes add
 * claims and restrict nothing, so `--scope "openid profile"` still calls the whole API); a scope the server does not
 * offer is refused.
 */
function scopesOf(list: string | undefined): string[] {
  const named = (list ?? 'openid').split(/\s+/).filter(Boolean);
  const unknown = named.find(
    (scope) => !isApiScope(scope) && !(OPENID_SCOPES as readonly string[]).includes(scope) && scope !== EVERY_API_SCOPE,
  );
  if (unknown !== undefined)
    throw new UsageError(
      `token: --scope ${JSON.stringify(unknown)} is not a scope this server offers (${[...OPENID_SCOPES, ...API_SCOPE_NAMES].join(', ')})`,
    );
  const scopes = [...new Set(named)];
  return scopes.some((scope) => isApiScope(scope) || scope === EVERY_API_SCOPE) ? scopes : [...scopes, ...API_SCOPE_NAMES];
}

async function token(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      sub: { type: 'string' },
      email: { type: 'string' },
      amr: { type: 'string' },
      acr: { type: 'string' },
      scope: { type: 'string' },
      ttl: { type: 'string' },
    },
    strict: true,
  });
  if (!values.sub === !values.email) throw new UsageError('token: give exactly one of --sub or --email');
  const amr = values.amr === undefined ? ['otp'] : amrValues(values.amr, config);
  let subject = values.sub;
  if (values.email) {
    const { userIdByEmail } = await import('./commands/database-commands.js');
    subject = await userIdByEmail(config, values.email.trim().toLowerCase());
  }
  let ttlSeconds = config.tokens.accessTokenTtlSeconds;
  if (values.ttl) {
    try {
      ttlSeconds = parseDurationSeconds(values.ttl);
    } catch (error) {
      throw new UsageError(`token: --ttl ${(error as Error).message}`);
    }
    if (ttlSeconds <= 0) throw new UsageError('token: --ttl must be positive');
  }
  const keys = await loadKeyMaterial({
    signingKey: config.keys.signingKey,
    verifyKeys: config.keys.verifyKeys,
    dataDir: config.dataDir,
    production: config.env === 'production',
  });
  const jwt = await mintAccessToken(keys.signing, {
    subject: subject!,
    issuer: config.tokens.issuer,
    audience: config.tokens.audience,
    ttlSeconds,
    amr,
    ...(values.acr ? { acr: values.acr } : {}),
    scope: scopesOf(values.scope),
  });
  process.stdout.write(`${jwt}\n`);
}

/** A command that opens the database, loaded with it. */
async function databaseCommand(
  name: 'migrateCommand' | 'seedCommand' | 'outboxCommand' | 'documentsCommand' | 'deleteDocumentCommand',
  config: Config,
  args: string[],
): Promise<void> {
  const commands = await import('./commands/database-commands.js');
  await commands[name](config, args);
}

/** A person's own commands: over HTTP to a server, with no configuration, database or key of this machine. */
const USER_COMMANDS = ['login', 'whoami', 'logout'];

async function userCommand(command: string, args: string[]): Promise<void> {
  const { loginCommand, whoamiCommand, logoutCommand } = await import('./commands/user-commands.js');
  if (command === 'login') return loginCommand(args);
  if (command === 'whoami') return whoamiCommand(args);
  return logoutCommand(args);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    // `help <command>`: that command's own entries.
    process.stdout.write(rest[0] === undefined ? USAGE : (helpFor(rest[0]) ?? unknownCommand(rest[0])));
    return;
  }
  if (!COMMANDS.includes(command)) unknownCommand(command);
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(helpFor(command)!);
    return;
  }
  if (command === 'keygen') {
    parseArgs({ args: rest, options: {}, strict: true });
    process.stdout.write(`${JSON.stringify(await generateSigningJwk())}\n`);
    return;
  }
  if (USER_COMMANDS.includes(command)) return userCommand(command, rest);
  if (existsSync('.env')) process.loadEnvFile('.env');
  const config = loadConfig({ env: process.env, readFile: (file) => readFileSync(file, 'utf8'), version: readVersion() });
  switch (command) {
    case 'migrate':
      return databaseCommand('migrateCommand', config, rest);
    case 'seed':
      return databaseCommand('seedCommand', config, rest);
    case 'token':
      return token(config, rest);
    case 'outbox':
      return databaseCommand('outboxCommand', config, rest);
    case 'documents':
      return databaseCommand('documentsCommand', config, rest);
    case 'delete-document':
      return databaseCommand('deleteDocumentCommand', config, rest);
    case 'persisted': {
      const { persistedCommand } = await import('./commands/persisted-commands.js');
      return persistedCommand(config, rest);
    }
    case 'budget': {
      const { budgetCommand } = await import('./commands/budget-commands.js');
      return budgetCommand(config, rest);
    }
    case 'plan': {
      const { planCommand } = await import('./commands/plan-commands.js');
      return planCommand(config, rest);
    }
    case 'sessions': {
      const { sessionsCommand } = await import('./commands/session-commands.js');
      return sessionsCommand(config, rest);
    }
    case 'schema': {
      const { schemaCommand } = await import('./commands/schema-commands.js');
      return schemaCommand(config, rest);
    }
    case 'audit': {
      const { auditCommand } = await import('./commands/audit-commands.js');
      return auditCommand(config, rest);
    }
    default:
      unknownCommand(command);
  }
}

/** A command there is not: the one it is close to, if any. */
function unknownCommand(command: string): never {
  const near = didYouMean(command, COMMANDS);
  throw new UsageError(`unknown command "${command}"${near ? `. Did you mean "${near}"?` : ''}`);
}

/** What follows the error: a close option for an unknown one, and where the command's options are told. */
function hintFor(error: unknown, command: string | undefined): string {
  const known = command !== undefined && COMMANDS.includes(command);
  if (isParseArgsError(error) && known) {
    const option = /option '(-{1,2}[^']+)'/.exec((error as Error).message)?.[1];
    const near = option && didYouMean(option, optionsOf(command));
    return `${near ? `  Did you mean ${near}?\n` : ''}  pnpm latchkey help ${command} shows its options\n`;
  }
  if (error instanceof UsageError)
    return known ? `  pnpm latchkey help ${command} shows its options\n` : '  pnpm latchkey help lists the commands\n';
  return '';
}

/** node:util's parseArgs refusing the command line (an unknown option, a missing value). */
const isParseArgsError = (error: unknown) =>
  error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');

async function exitCodeOf(error: unknown): Promise<number> {
  // By its code: the user commands' module is loaded only when one of them runs.
  if (isCodedError(error) && error.code === 'USER_COMMAND_FAILED') return 1;
  if (error instanceof UsageError || error instanceof ConfigError || error instanceof KeyMaterialError || isParseArgsError(error)) return 2;
  // A domain answer can only come from a command that loaded the domain.
  const { domainExitCode } = await import('./commands/database-commands.js');
  return domainExitCode(error) ?? 1;
}

main(process.argv.slice(2)).catch(async (error: unknown) => {
  process.stderr.write(`latchkey: ${(error as Error).message}\n${hintFor(error, process.argv[2])}`);
  process.exitCode = await exitCodeOf(error);
});
