import { CodedError } from '@latchkey/errors';

/**
 * The database cannot serve this statement now: it is unreachable, refused the connection, went away mid-query,
 * or did not answer within the request's deadline. Callers answer SERVICE_UNAVAILABLE (503 with Retry-After),
 * never a 500. Messages are fixed and reveal nothing (no host, no URL, no SQL).
 */
export class DatabaseUnavailableError extends CodedError<'SERVICE_UNAVAILABLE'> {
  constructor(message = 'The database is unavailable.', options?: { cause?: unknown }, name = 'DatabaseUnavailableError') {
    super(name, 'SERVICE_UNAVAILABLE', message, options);
  }
}

/** A statement's deadline (DATABASE_TIMEOUT from the start of its request) passed before it was answered. */
export class DatabaseTimeoutError extends DatabaseUnavailableError {
  constructor() {
    super('The database did not answer in time.', undefined, 'DatabaseTimeoutError');
  }
}

/** postgres-js and node-postgres connection failures (error `code`s), and the socket errors under them. */
const CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that is going away or cannot take us now: admin/crash shutdown, cannot connect now,
 * the connection exception class (08), too many connections.
 */
const UNAVAILABLE_SQLSTATE = /^(57P0[123]|08\d{3}|53300)$/;

/** node-postgres reports some connection failures by message only. */
const PG_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error)/;

/**
 * Whether `error` (or any error in its `cause` chain: drizzle wraps driver errors) means the database could not
 * be reached or did not answer, rather than a mistake in the statement or the data.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 6; depth++) {
    if (current instanceof DatabaseUnavailableError) return true;
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (CONNECTION_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
    if (typeof message === 'string' && PG_MESSAGES.test(message)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
