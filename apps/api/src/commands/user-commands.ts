// `pnpm latchkey login|whoami|logout --url URL`: a person's own commands, run against a Latchkey server over HTTP
// with the token the device grant (RFC 8628) gave them. They read no configuration, database or key: only the
// server's URL and the credentials file in the user's configuration directory.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { API_SCOPE_NAMES } from '@latchkey/auth/configuration';
import { createClient, UnauthenticatedError, WhoamiDocument, type WhoamiQuery } from '@latchkey/client';
import { CodedError } from '@latchkey/errors';
import { UsageError } from './usage.js';

/** The command line's own client, registered by every server unless OIDC_CLI_CLIENT=false. */
export const DEFAULT_CLI_CLIENT = 'latchkey-cli';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** RFC 8628 3.5: the polling interval when the server names none, and what `slow_down` adds to it. */
const DEFAULT_INTERVAL_SECONDS = 5;
const SLOW_DOWN_SECONDS = 5;

/** A failure a person can act on (code USER_COMMAND_FAILED): the message says what happened and what to do (exit 1). */
export class UserCommandError extends CodedError<'USER_COMMAND_FAILED'> {
  constructor(message: string) {
    super('UserCommandError', 'USER_COMMAND_FAILED', message);
  }
}

/** What `login` stores for one server. */
interface StoredCredentials {
  client_id: string;
  token_endpoint: string;
  access_token: string;
  refresh_token?: string;
  /** epoch seconds */
  expires_at: number;
  scope?: string;
}

type CredentialsFile = { servers: Record<string, StoredCredentials> };

/** $XDG_CONFIG_HOME/latchkey/credentials.json (~/.config by default): only its owner may read it (0600, in 0700). */
export function credentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_CONFIG_HOME']?.trim() || path.join(homedir(), '.config');
  return path.join(base, 'latchkey', 'credentials.json');
}

function readCredentials(file: string): CredentialsFile {
  if (!existsSync(file)) return { servers: {} };
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<CredentialsFile>;
    return { servers: parsed.servers ?? {} };
  } catch {
    throw new UserCommandError(`${file} is not valid JSON: remove it and run login again`);
  }
}

/** Written whole, then renamed into place, with mode 0600 from its first byte. */
function writeCredentials(file: string, credentials: CredentialsFile): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

/** The server's URL as the key of its credentials: origin and path, no trailing slash, no query. */
function serverKey(url: string | undefined, command: string): string {
  if (!url) throw new UsageError(`${command}: --url URL is required (the Latchkey server, e.g. https://latchkey.example.com)`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`${command}: --url ${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new UsageError(`${command}: --url must be http or https`);
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}

async function postForm(url: string, form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form),
    });
  } catch (error) {
    throw new UserCommandError(`${url} did not answer: ${(error as Error).cause ?? (error as Error).message}`);
  }
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  return { status: response.status, body };
}

/** The server's discovery document: where a device asks for a code, where it polls, where it revokes. */
async function discover(server: string): Promise<{ deviceAuthorization: string; token: string; revocation?: string }> {
  const url = `${server}/.well-known/openid-configuration`;
  let metadata: Record<string, unknown>;
  try {
    const response = await fetch(url, { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    metadata = (await response.json()) as Record<string, unknown>;
  } catch (error) {
    throw new UserCommandError(`${server} is not a Latchkey server this command can reach (${url}: ${(error as Error).message})`);
  }
  const deviceAuthorization = metadata['device_authorization_endpoint'];
  const token = metadata['token_endpoint'];
  if (typeof deviceAuthorization !== 'string' || typeof token !== 'string')
    throw new UserCommandError(`${server} offers no device sign-in (its discovery has no device_authorization_endpoint)`);
  const revocation = metadata['revocation_endpoint'];
  return { deviceAuthorization, token, ...(typeof revocation === 'string' ? { revocation } : {}) };
}

const tokenError = (body: Record<string, unknown>) =>
  `${String(body['error'] ?? 'error')}${body['error_description'] ? `: ${String(body['error_description'])}` : ''}`;

/** What the token endpoint's answer is stored as. */
function stored(clientId: string, tokenEndpoint: string, body: Record<string, unknown>, previous?: StoredCredentials): StoredCredentials {
  const refresh = typeof body['refresh_token'] === 'string' ? body['refresh_token'] : previous?.refresh_token;
  return {
    client_id: clientId,
    token_endpoint: tokenEndpoint,
    access_token: String(body['access_token']),
    ...(refresh ? { refresh_token: refresh } : {}),
    expires_at: Math.floor(Date.now() / 1000) + Number(body['expires_in'] ?? 0),
    ...(typeof body['scope'] === 'string' ? { scope: body['scope'] } : {}),
  };
}

/**
 * `login --url URL [--client ID] [--scope "..."]`: the device grant. Prints the code and where to enter it, polls the
 * token endpoint as RFC 8628 says (every `interval` seconds, 5 more after each `slow_down`), and stores the tokens.
 */
export async function loginCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { url: { type: 'string' }, client: { type: 'string' }, scope: { type: 'string' } },
    strict: true,
  });
  const server = serverKey(values.url, 'login');
  const clientId = values.client?.trim() || DEFAULT_CLI_CLIENT;
  // Every API scope by default (the CLI acts for its person); `--scope` asks for fewer.
  const scope = values.scope?.trim() || ['openid', ...API_SCOPE_NAMES].join(' ');
  const endpoints = await discover(server);
  const started = await postForm(endpoints.deviceAuthorization, { client_id: clientId, scope });
  if (started.status !== 200) throw new UserCommandError(`${server} refused the device sign-in (${tokenError(started.body)})`);
  const { device_code: deviceCode, user_code: userCode, verification_uri: uri } = started.body as Record<string, string>;
  const complete = started.body['verification_uri_complete'];
  const expiresIn = Number(started.body['expires_in'] ?? 0);
  process.stdout.write(
    `To sign in, open ${uri} in a browser and enter the code ${userCode}\n` +
      (typeof complete === 'string' ? `  or open ${complete}\n` : '') +
      `The code expires in ${Math.round(expiresIn / 60)} minutes. Waiting for the sign-in...\n`,
  );
  let interval = Number(started.body['interval'] ?? DEFAULT_INTERVAL_SECONDS);
  const deadline = Date.now() + expiresIn * 1000;
  for (;;) {
    await wait(interval * 1000);
    const polled = await postForm(endpoints.token, { grant_type: DEVICE_GRANT, device_code: deviceCode!, client_id: clientId });
    if (polled.status === 200) {
      const file = credentialsPath();
      const credentials = readCredentials(file);
      credentials.servers[server] = stored(clientId, endpoints.token, polled.body);
      writeCredentials(file, credentials);
      process.stdout.write(`Signed in to ${server}. Token stored in ${file}\n`);
      return;
    }
    const error = polled.body['error'];
    // A server briefly unavailable (503, e.g. its database) is asked again at the next interval.
    if (error === 'authorization_pending' || polled.status === 503) continue;
    if (error === 'slow_down') {
      interval += SLOW_DOWN_SECONDS;
      continue;
    }
    if (error === 'expired_token' || Date.now() > deadline)
      throw new UserCommandError('the code expired before the sign-in was completed: run login again');
    if (error === 'access_denied') throw new UserCommandError('the sign-in was cancelled or refused in the browser');
    throw new UserCommandError(`${server} refused the sign-in (${tokenError(polled.body)})`);
  }
}

/** The stored token for `server`, refreshed first when it has expired and a refresh token is held. */
async function currentToken(server: string): Promise<StoredCredentials> {
  const file = credentialsPath();
  const credentials = readCredentials(file);
  const held = credentials.servers[server];
  if (!held) throw new UserCommandError(`not signed in to ${server}: run pnpm latchkey login --url ${server}`);
  if (held.expires_at > Math.floor(Date.now() / 1000) + 5 || !held.refresh_token) return held;
  const refreshed = await postForm(held.token_endpoint, {
    grant_type: 'refresh_token',
    refresh_token: held.refresh_token,
    client_id: held.client_id,
  });
  if (refreshed.status !== 200) {
    delete credentials.servers[server];
    writeCredentials(file, credentials);
    throw new UserCommandError(
      `the sign-in to ${server} has ended (${tokenError(refreshed.body)}): run pnpm latchkey login --url ${server}`,
    );
  }
  credentials.servers[server] = stored(held.client_id, held.token_endpoint, refreshed.body, held);
  writeCredentials(file, credentials);
  return credentials.servers[server];
}

/** `whoami --url URL`: the account and the token's scopes, as the API answers for the stored token (GraphQL `viewer`). */
export async function whoamiCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { url: { type: 'string' } }, strict: true });
  const server = serverKey(values.url, 'whoami');
  const held = await currentToken(server);
  const client = createClient({ url: `${server}/graphql`, getAccessToken: () => held.access_token, clientName: DEFAULT_CLI_CLIENT });
  let answer: WhoamiQuery['viewer'];
  try {
    ({ viewer: answer } = await client.request(WhoamiDocument));
  } catch (error) {
    if (error instanceof UnauthenticatedError)
      throw new UserCommandError(`${server} no longer accepts the stored token: run pnpm latchkey login --url ${server}`);
    throw new UserCommandError(`${server}/graphql: ${(error as Error).message}`);
  }
  if (!answer) throw new UserCommandError(`${server} does not know the stored token: run pnpm latchkey login --url ${server}`);
  const who = answer.user?.email ?? answer.subject;
  process.stdout.write(
    `${who}${answer.user?.displayName ? ` (${answer.user.displayName})` : ''}\n` +
      `server: ${server}\nsubject: ${answer.subject}\nscopes: ${answer.scope.join(' ')}\ntoken expires: ${answer.expiresAt}\n`,
  );
}

/** `logout --url URL`: revokes the refresh token at the server (best effort) and forgets the credentials. */
export async function logoutCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { url: { type: 'string' } }, strict: true });
  const server = serverKey(values.url, 'logout');
  const file = credentialsPath();
  const credentials = readCredentials(file);
  const held = credentials.servers[server];
  if (!held) {
    process.stdout.write(`not signed in to ${server}\n`);
    return;
  }
  // Best effort: the credentials are forgotten here whether or not the server can be told.
  const { refresh_token: refreshToken } = held;
  if (refreshToken) {
    await discover(server)
      .then(({ revocation }) =>
        revocation ? postForm(revocation, { token: refreshToken, token_type_hint: 'refresh_token', client_id: held.client_id }) : undefined,
      )
      .catch(() => undefined);
  }
  delete credentials.servers[server];
  writeCredentials(file, credentials);
  process.stdout.write(`Signed out of ${server} on this machine\n`);
}
