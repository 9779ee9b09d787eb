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
/** pino's numeric level of `fatal`. */
const FATAL_LEVEL = 60;
/** How often the buffer is written out in production: a line waits at most this long (well inside the promised second). */
const FLUSH_INTERVAL_MS = 500;

interface Flushable {
  flush?(callback?: (error?: Error) => void): void;
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
          // (pino writes a fatal line out synchronously itself: an asynchronous write started now would still be
          // in flight when the process exits)
          if (lineLevel >= ERROR_LEVEL && lineLevel < FATAL_LEVEL) flush();
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

/** How long a crash waits, at most, for a write pino's destination has in flight. */
const FATAL_DRAIN_MS = 1000;

/** pino's asynchronous destination (sonic-boom): `_writing` is its own flag for a write in flight. */
interface Destination {
  _writing?: boolean;
  once?(event: 'drain', listener: () => void): unknown;
}

/**
 * For `uncaughtException` and `unhandledRejection`: the error as a fatal line, written out with everything still
 * buffered before it, then exit 1. pino writes a fatal line out synchronously, but sonic-boom's synchronous flush
 * writes what waits behind a write in flight before that write lands (pinojs/sonic-boom#101), so the lines would come
 * out of order, and the exit could lose the write. A write in flight is waited for first (its `drain`): the event
 * loop runs that long, usually a millisecond, and at most FATAL_DRAIN_MS.
 */
export function logFatalAndExit(logger: Logger, error: unknown, message: string): void {
  const destination = (logger as unknown as Record<symbol, Destination | undefined>)[pino.symbols.streamSym];
  let exited = false;
  const logAndExit = () => {
    if (exited) return;
    exited = true;
    try {
      logger.fatal({ err: error }, message);
    } finally {
      process.exit(1);
    }
  };
  if (destination?._writing && destination.once) {
    destination.once('drain', logAndExit);
    setTimeout(logAndExit, FATAL_DRAIN_MS);
    return;
  }
  logAndExit();
}
