import pino, { type DestinationStream, type Logger } from 'pino';

export interface LoggerOptions {
  /** where lines go. @default stdout, through pino's asynchronous destination */
  destination?: DestinationStream;
  /**
   * `production` buffers lines up to 4 KiB (one write syscall per request log line measurably slowed the hot
   * path) and writes the buffer out every 500 ms (each line within a second, as promised); otherwise each line is written at once.
   * @default 'development'
   */
  env?: string;
}

/** pino's numeric level of `error`: lines at this level and above are written at once, in every mode. */
const ERROR_LEVEL = 50;
/** How often the buffer is written out in production: a line waits at most this long (well inside the promised second). */
const FLUSH_INTERVAL_MS = 500;

interface Flushable {
  flush?(callback?: (error?: Error) => void): void;
  flushSync?(): void;
}

/**
 * JSON logs through pino (`time` in epoch milliseconds: an ISO string per line cost ~2 us here). Nothing is lost
 * on the way out: pino's destination writes what it holds synchronously when the process exits (process.exit,
 * or the event loop running dry), `exitAfterFlush` is the exit for signals and start-up failures, and
 * `logFatalAndExit` the one for uncaught exceptions.
 */
export function createLogger(level: string, options: LoggerOptions = {}): Logger {
  const buffered = options.env === 'production';
  const destination = options.destination ?? pino.destination({ dest: 1, sync: false, minLength: buffered ? 4096 : 0 });
  const flush = () => {
    try {
      (destination as Flushable).flush?.();
    } catch {
      // the destination is not open yet, or already closed: nothing waits in it
    }
  };
  if (buffered) setInterval(flush, FLUSH_INTERVAL_MS).unref();
  return pino(
    {
      level,
      base: { service: 'latchkey' },
      serializers: { err: pino.stdSerializers.err },
      hooks: {
        logMethod(args, method, lineLevel) {
          method.apply(this, args);
          if (lineLevel >= ERROR_LEVEL) flush();
        },
      },
    },
    destination,
  );
}

/**
 * Log lines a person reads: pino-pretty's one coloured line per record (time, level, message, then the fields),
 * written synchronously. For `pnpm start` in a terminal during development only; loaded only then.
 */
export async function prettyDestination(): Promise<DestinationStream> {
  const { default: pretty } = await import('pino-pretty');
  return pretty({ colorize: true, singleLine: true, sync: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,service' });
}

/** Writes out what the logger still holds, then exits with `code`. */
export function exitAfterFlush(logger: Logger, code: number): void {
  logger.flush(() => process.exit(code));
}

/**
 * For `uncaughtException` and `unhandledRejection`: the error as a fatal line, everything still buffered written
 * synchronously (the process must not run on), then exit 1.
 */
export function logFatalAndExit(logger: Logger, error: unknown, message: string): never {
  try {
    logger.fatal({ err: error }, message);
    ((logger as unknown as Record<symbol, Flushable>)[pino.symbols.streamSym] as Flushable | undefined)?.flushSync?.();
  } finally {
    process.exit(1);
  }
}
