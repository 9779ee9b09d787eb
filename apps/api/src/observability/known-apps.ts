import type { Logger } from 'pino';

export interface KnownAppsOptions {
  /** the names of the apps imported with `--app` (`listAppNames` of @latchkey/persisted) */
  list: () => Promise<readonly string[]>;
  logger: Logger;
  /** @default Date.now */
  now?: () => number;
}

/** A name not known yet sends an instance to read the list again at most this often. */
export const KNOWN_APPS_REFRESH_MS = 60_000;

/**
 * The apps imported with `--app`, kept in memory: a client-name header counts as a client only when it names one of
 * them, so every client label is a name an operator chose. Read at start, and again when a header names an app not
 * known yet, at most once a minute (an import on another instance is learnt within a minute of its first use; a
 * flood of made-up names reads the list once a minute). A read that fails is logged and changes nothing: no request
 * waits for it or fails because of it.
 */
export function createKnownApps(options: KnownAppsOptions) {
  const { list, logger } = options;
  const now = options.now ?? Date.now;
  let names: ReadonlySet<string> = new Set();
  let lastRead = Number.NEGATIVE_INFINITY;
  let reading: Promise<void> | undefined;

  const read = (): Promise<void> => {
    lastRead = now();
    reading ??= list()
      .then(
        (found) => void (names = new Set(found)),
        (error: unknown) => logger.warn({ err: error }, 'reading the imported apps failed: client-name headers count as unknown clients'),
      )
      .finally(() => (reading = undefined));
    return reading;
  };

  return {
    /** The first read (start-up); a failure is logged, and the list is read again when a header names an app. */
    start: read,
    /** Whether `name` is an imported app's, as last read; a name not known yet may start a read for the next request. */
    has(name: string): boolean {
      if (names.has(name)) return true;
      if (now() - lastRead >= KNOWN_APPS_REFRESH_MS) void read();
      return false;
    },
  };
}
