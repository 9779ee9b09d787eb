import pino, {} from 'pino';
/** pino's numeric level of `error`: lines at this level and above are written at once, in every mode. */
const ERROR_LEVEL = 50;
/** How often the buffer is written out in production: a line waits at most this long (well inside the promised second). */
const FLUSH_INTERVAL_MS = 500;
/**
 * JSON logs through pino (`time` in epoch milliseconds: an ISO string per line cost ~2 us here). Nothing is lost
 * on the way out: pino's destination writes what it holds synchronously when the process exits (process.exit,
 * or the event loop running dry), `exitAfterFlush` is the exit for signals and start-up failures, and
 * `logFatalAndExit` the one for uncaught exceptions.
 */
export function createLogger(level, options = {}) {
    const buffered = options.env === 'production';
    const destination = options.destination ?? pino.destination({ dest: 1, sync: false, minLength: buffered ? 4096 : 0 });
    const flush = () => {
        try {
            destination.flush?.();
        }
        catch {
            // the destination is not open yet, or already closed: nothing waits in it
        }
    };
    if (buffered)
        setInterval(flush, FLUSH_INTERVAL_MS).unref();
    return pino({
        level,
        base: { service: 'latchkey' },
        serializers: { err: pino.stdSerializers.err },
        hooks: {
            logMethod(args, method, lineLevel) {
                method.apply(this, args);
                if (lineLevel >= ERROR_LEVEL)
                    flush();
            },
        },
    }, destination);
}
/** Writes out what the logger still holds, then exits with `code`. */
export function exitAfterFlush(logger, code) {
    logger.flush(() => process.exit(code));
}
/**
 * For `uncaughtException` and `unhandledRejection`: the error as a fatal line, everything still buffered written
 * synchronously (the process must not run on), then exit 1.
 */
export function logFatalAndExit(logger, error, message) {
    try {
        logger.fatal({ err: error }, message);
        logger[pino.symbols.streamSym]?.flushSync?.();
    }
    finally {
        process.exit(1);
    }
}
//# sourceMappingURL=logger.js.map