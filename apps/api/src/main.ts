import { existsSync, readFileSync } from 'node:fs';
import { type Config, ConfigError, loadConfig } from './config/load.js';
import { isPlainStartUpError } from './config/start-up-errors.js';
import { createLogger, exitAfterFlush, logFatalAndExit, prettyDestination } from './logger.js';
import { startIdleMemoryRelease } from './observability/idle-memory-release.js';
import { bindListeners, type BoundListeners } from './service-listeners.js';
import { readVersion } from './version.js';

// Start-up checks what needs no database first, and says a fault as the first line of its output: the
// configuration, then the listen addresses (PORT, TLS_PORT, METRICS_PORT: bound here, held, answering "starting"),
// then the keys. The database is opened after them (its faults are said within DATABASE_TIMEOUT), with the checks
// that need it (migrations, the demo data); only then is the rest of the service loaded (the GraphQL stack, and
// oidc-provider with its runtime warning) and the application served.

/** A signal this soon after the first is the same Ctrl-C forwarded again (by pnpm), not a person pressing it twice. */
const DUPLICATE_SIGNAL_MS = 500;

/** A fault of the configuration or the environment: its own lines on stderr (no stack trace), exit 1. */
function refuseToStart(error: unknown): never {
  process.stderr.write(`latchkey: ${(error as Error).message}\n`);
  process.exit(1);
}

let config: Config;
try {
  if (existsSync('.env')) {
    try {
      process.loadEnvFile('.env');
    } catch (error) {
      throw new ConfigError(`.env: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
  config = loadConfig({ env: process.env, readFile: (file) => readFileSync(file, 'utf8'), version: readVersion() });
} catch (error) {
  if (isPlainStartUpError(error)) refuseToStart(error);
  throw error;
}

let listeners: BoundListeners;
try {
  listeners = await bindListeners(config);
} catch (error) {
  if (isPlainStartUpError(error)) refuseToStart(error);
  throw error;
}

// Lines a person reads in a terminal during development (docs/choices.md); JSON lines everywhere else.
const pretty = config.env === 'development' && process.stdout.isTTY === true;
const logger = createLogger(config.logLevel, { env: config.env, ...(pretty ? { destination: await prettyDestination() } : {}) });
// Whatever goes wrong, its line reaches the log before the process ends.
process.on('uncaughtException', (error) => logFatalAndExit(logger, error, 'uncaught exception'));
process.on('unhandledRejection', (reason) => logFatalAndExit(logger, reason, 'unhandled rejection'));
/** Log lines may be buffered: write them out before leaving. */
const exit = (code: number) => exitAfterFlush(logger, code);
try {
  // The keys and the database next (their faults said before the application's modules load), then the rest.
  const { prepareStart } = await import('./start-up.js');
  const prepared = await prepareStart(config, logger, listeners);
  const { startService } = await import('./service.js');
  const service = await startService(config, logger, { prepared });
  const { publicUrl } = config.http;
  const demo = config.auth.demoClientId ? `${publicUrl}/` : undefined;
  logger.info(
    { url: `${service.url}/graphql`, publicUrl, demo, database: service.database.kind, env: config.env },
    `Latchkey API listening on ${service.url}/graphql; public URL ${publicUrl}${demo ? `, the demo at ${demo} (sign-in links: pnpm latchkey outbox)` : ''}`,
  );
  logger.flush();
  // After a burst of load, memory goes back to the system once the server has been idle for 15 s, not whenever V8 decides.
  const stopMemoryRelease = startIdleMemoryRelease({
    onRelease: ({ heapBefore, heapAfter, ms }) =>
      logger.info(
        { heapBeforeMiB: Math.round(heapBefore / 1048576), heapAfterMiB: Math.round(heapAfter / 1048576), ms: Math.round(ms) },
        'idle: unused memory released',
      ),
  });
  let stoppingSince: number | undefined;
  const stop = (signal: NodeJS.Signals) => {
    // Under `pnpm start` one Ctrl-C arrives twice (from the terminal, and forwarded by pnpm, at once): the copy is
    // ignored, so a clean shutdown exits 0 and pnpm reports nothing. A second signal later (Ctrl-C pressed again)
    // stops the process at once, as the signal's default does.
    if (stoppingSince !== undefined) {
      if (performance.now() - stoppingSince < DUPLICATE_SIGNAL_MS) return;
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      process.kill(process.pid, signal);
      return;
    }
    stoppingSince = performance.now();
    stopMemoryRelease();
    logger.info({ signal, ...config!.shutdown }, 'shutting down');
    logger.flush();
    // Whatever happens, the process is gone within SHUTDOWN_TIMEOUT.
    setTimeout(() => {
      logger.warn('shutdown deadline reached');
      exit(1);
    }, config!.shutdown.timeoutMs).unref();
    service.shutdown(config!.shutdown).then(
      (clean) => {
        logger.info({ clean }, 'stopped');
        exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} catch (error) {
  // Configuration, keys, the schema and the environment (port, database, data directory) answer in plain lines;
  // anything else is a bug, logged with its stack.
  if (isPlainStartUpError(error)) {
    logger.flush();
    refuseToStart(error);
  }
  logger.fatal({ err: error }, 'start-up failed');
  exit(1);
}
