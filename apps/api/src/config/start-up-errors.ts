import { CodedError, definedErrors } from '@latchkey/errors';

// What start-up says when the machine or the database is not as the configuration expects: the fault on one line,
// the setting or command that fixes it on the next. `main` prints the message as it is (no stack trace) and exits 1;
// faults it does not know stay errors with their stack (a bug, not the environment).

interface Listening {
  /** the setting that chose the port: PORT, TLS_PORT or METRICS_PORT */
  setting: string;
  host: string;
  port: number;
}
interface DatabaseServer {
  /** host:port of the PostgreSQL server DATABASE_URL names */
  server: string;
  database: string;
  user: string;
  reason: string;
}

const address = ({ host, port }: Listening) => `${host.includes(':') ? `[${host}]` : host}:${port}`;

export const START_UP_ERRORS = {
  PORT_IN_USE: (at: Listening) =>
    `${address(at)} is already in use (another server, or a Latchkey still running).\n` +
    `  Stop it, or choose another port: ${at.setting}=${at.port === 0 ? 4001 : at.port + 1} pnpm start`,
  PORT_NOT_PERMITTED: (at: Listening) =>
    `${at.setting} ${at.port}: this user may not listen on ${address(at)} (ports below 1024 need privileges).\n` +
    `  Choose a port from 1024 up: ${at.setting}=4000`,
  HOST_NOT_LOCAL: (at: Listening) =>
    `HOST ${at.host}: not an address of this machine, so nothing can listen on ${address(at)}.\n` +
    '  Set HOST to one of its addresses: 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)',
  DATABASE_MISSING: (db: DatabaseServer) =>
    `DATABASE_URL: the PostgreSQL server at ${db.server} has no database "${db.database}".\n` +
    `  Create it (createdb -h ${db.server.replace(/:(\d+)$/, ' -p $1')} -U ${db.user} ${db.database}), or name another in DATABASE_URL`,
  DATABASE_UNREACHABLE: (db: DatabaseServer) =>
    `DATABASE_URL: no PostgreSQL server answers at ${db.server} (${db.reason}).\n` +
    '  Start it, or correct the host and port in DATABASE_URL (unset, Latchkey keeps an embedded database in DATA_DIR)',
  DATABASE_LOGIN_REFUSED: (db: DatabaseServer) =>
    `DATABASE_URL: the PostgreSQL server at ${db.server} refused the user "${db.user}" (${db.reason}).\n` +
    '  Correct the user and password in DATABASE_URL',
  DATABASE_URL_INVALID:
    'DATABASE_URL: not a connection URL PostgreSQL clients can read (the value is not shown: it may hold a password).\n' +
    '  Write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE, with special characters percent-encoded (@ as %40)',
  DATABASE_IN_USE: ({ dataDir, pid }: { dataDir: string; pid: number }) =>
    `the embedded database in ${dataDir} is open in process ${pid} (a server still running?); it serves one process at a time.\n` +
    '  Stop that process (Ctrl-C), set DATA_DIR to another directory, or share PostgreSQL (DATABASE_URL)',
  REDIS_UNREACHABLE: ({ server, reason }: { server: string; reason: string }) =>
    `REDIS_URL: no Redis server answers at ${server} (${reason}).\n` +
    '  Start it, or correct the host and port in REDIS_URL (unset, the shared counters and buckets live in PostgreSQL)',
  DATA_DIR_UNUSABLE: ({ dataDir, reason }: { dataDir: string; reason: string }) =>
    `DATA_DIR ${dataDir}: Latchkey cannot keep its data there (${reason}).\n  Set DATA_DIR to a directory this user can write`,
} as const;

/** A fault of the environment at start-up, with the setting or command that fixes it. */
export class StartUpError extends definedErrors('StartUpError', START_UP_ERRORS) {}

/**
 * The codes a request or a command is answered with (a denial, a step-up, a domain error, a refused form, an
 * outage, bad command-line input): met at start-up, they are not a fault of its configuration or environment.
 */
const NOT_OF_START_UP = new Set([
  'AUTHORIZATION_DENIED',
  'INSUFFICIENT_USER_AUTHENTICATION',
  'NOT_FOUND',
  'BAD_USER_INPUT',
  'FORM_INVALID',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'SERVICE_UNAVAILABLE',
  'USAGE_INVALID',
  'MANIFEST_INVALID',
]);

/**
 * The errors `main` prints as plain lines: the configuration, the keys, the schema and the environment at
 * start-up (every coded error but a request's); anything else is logged with its stack.
 */
export function isPlainStartUpError(error: unknown): error is CodedError {
  return error instanceof CodedError && !NOT_OF_START_UP.has(error.code);
}

const codeOf = (error: unknown) => (error && typeof error === 'object' ? (error as { code?: unknown }).code : undefined);

/**
 * Redis (REDIS_URL) that cannot be reached while a store opens on it: the fault named with the server (never the
 * URL, which may hold a password), or the error as it was when it is something else.
 */
export function redisFault(error: unknown, redisUrl: string | undefined): unknown {
  if (!redisUrl || error instanceof CodedError) return error;
  const code = codeOf(error);
  const closed = error instanceof Error && /connection is closed|connect etimedout/i.test(error.message);
  if (!closed && !['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH'].includes(String(code))) return error;
  let server = 'the address it names';
  try {
    const url = new URL(redisUrl);
    server = `${url.hostname}:${url.port || 6379}`;
  } catch {
    // not a URL: said as the address it names
  }
  const reason = typeof code === 'string' ? code : 'the connection closed';
  return new StartUpError('REDIS_UNREACHABLE', { server, reason }, { cause: error });
}

/** A listener that could not bind (PORT, TLS_PORT, METRICS_PORT): the fault named, or the error as it was. */
export function listenFault(error: unknown, at: Listening): unknown {
  switch (codeOf(error)) {
    case 'EADDRINUSE':
      return new StartUpError('PORT_IN_USE', at, { cause: error });
    case 'EACCES':
      return new StartUpError('PORT_NOT_PERMITTED', at, { cause: error });
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new StartUpError('HOST_NOT_LOCAL', at, { cause: error });
    default:
      return error;
  }
}

/** File-system faults of a data directory this user cannot use. */
const DATA_DIR_CODES: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOTDIR: 'a file stands where a directory must be',
  ENOSPC: 'no space left on the device',
};

/** Why the server a URL names could not be used, as a person reads it (no secret of the URL in it). */
const UNREACHABLE_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'unknown host',
  EAI_AGAIN: 'the host name could not be resolved now',
  ETIMEDOUT: 'no answer in time',
  CONNECT_TIMEOUT: 'no answer within DATABASE_TIMEOUT',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'the connection was reset',
  SERVICE_UNAVAILABLE: 'no answer within DATABASE_TIMEOUT',
};

/** host:port, database and user of a PostgreSQL URL (postgres-js's defaults where it names none); never its password. */
function serverOf(url: string): Omit<DatabaseServer, 'reason'> {
  try {
    const parsed = new URL(url);
    const user = decodeURIComponent(parsed.username) || 'postgres';
    return {
      server: `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}`,
      database: decodeURIComponent(parsed.pathname.slice(1)) || user,
      user,
    };
  } catch {
    return { server: 'the host DATABASE_URL names', database: 'the database DATABASE_URL names', user: 'the user DATABASE_URL names' };
  }
}

/**
 * A database that could not be opened at start-up (PostgreSQL at DATABASE_URL, or the embedded one in DATA_DIR):
 * the fault named, or the error as it was. Drivers wrap their errors, so the `cause` chain is searched.
 */
export function databaseFault(error: unknown, where: { url: string | undefined; dataDir: string }): unknown {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 6; depth++) {
    const code = codeOf(current);
    if (code === 'DATABASE_IN_USE' && typeof (current as { ownerPid?: unknown }).ownerPid === 'number')
      return new StartUpError(
        'DATABASE_IN_USE',
        { dataDir: where.dataDir, pid: (current as { ownerPid: number }).ownerPid },
        { cause: error },
      );
    if (code === 'DATABASE_URL_INVALID') return new StartUpError('DATABASE_URL_INVALID', { cause: error });
    if (typeof code === 'string' && code in DATA_DIR_CODES && !where.url)
      return new StartUpError('DATA_DIR_UNUSABLE', { dataDir: where.dataDir, reason: DATA_DIR_CODES[code]! }, { cause: error });
    if (where.url && typeof code === 'string') {
      const server = serverOf(where.url);
      const message = String((current as { message?: unknown }).message ?? '');
      // SQLSTATE 3D000 invalid_catalog_name; 28P01 invalid_password; 28000 invalid_authorization_specification.
      if (code === '3D000') return new StartUpError('DATABASE_MISSING', { ...server, reason: message }, { cause: error });
      if (code === '28P01' || code === '28000')
        return new StartUpError('DATABASE_LOGIN_REFUSED', { ...server, reason: message }, { cause: error });
      if (code in UNREACHABLE_REASONS)
        return new StartUpError('DATABASE_UNREACHABLE', { ...server, reason: UNREACHABLE_REASONS[code]! }, { cause: error });
    }
    current = (current as { cause?: unknown }).cause;
  }
  return error;
}

/** The data directory's own faults (the key store under it, say): the fault named, or the error as it was. */
export function dataDirFault(error: unknown, dataDir: string): unknown {
  const code = codeOf(error);
  return typeof code === 'string' && code in DATA_DIR_CODES
    ? new StartUpError('DATA_DIR_UNUSABLE', { dataDir, reason: DATA_DIR_CODES[code]! }, { cause: error })
    : error;
}
