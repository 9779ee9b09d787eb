import { recordDeprecatedUses, type Database, type DeprecatedUse } from '@latchkey/db';
import type { Deprecation } from '@latchkey/schema-contract';
import type { Logger } from 'pino';
import type { DeprecatedUseSink } from '../graphql/plugins/use-deprecation-report.js';

export interface DeprecatedUsesOptions {
  /** where the last uses are kept: the database of the process's own work (`DatabaseHandle.background`) */
  db: Database;
  logger: Logger;
  /** counts one use of a coordinate by a client (`latchkey_deprecated_uses_total`); undefined: none are counted */
  count?: (coordinate: string, client: string) => void;
  /** @default Date.now */
  now?: () => number;
}

/** A (coordinate, client) pair's last use is written at most this often per instance, and failures logged as often. */
export const DEPRECATED_USE_WRITE_MS = 60_000;

/**
 * The uses of deprecated coordinates: each counted (METRICS_PORT), and the last use of each (coordinate, client) pair
 * kept in `deprecated_uses`, written at most once a minute per pair by this instance, in the background. Writes go one
 * statement at a time, the pairs that came meanwhile in the next one: a database that is down or slow delays or
 * fails no answer, and what waits is at most one entry per pair (coordinates come from the schema, clients from the
 * server). A failed write is logged at warn, at most once a minute; its uses are not written again before the pair's
 * next use a minute later, which moves the time forward anyway.
 */
export function createDeprecatedUses(options: DeprecatedUsesOptions): DeprecatedUseSink {
  const { db, count } = options;
  const now = options.now ?? Date.now;
  const written = new Map<string, number>();
  let waiting = new Map<string, DeprecatedUse>();
  let writing: Promise<void> | undefined;
  const failed = failureLog(options.logger, now);

  const writeAll = async (): Promise<void> => {
    // The uses of this turn of the event loop go together (an operation's coordinates, a batch's operations).
    await new Promise((resolve) => setImmediate(resolve));
    while (waiting.size > 0) {
      const uses = [...waiting.values()];
      waiting = new Map();
      await recordDeprecatedUses(db, uses).catch(failed);
    }
    writing = undefined;
  };

  const record = (coordinate: string, client: string, at: number) => {
    const pair = `${coordinate} ${client}`;
    const last = written.get(pair);
    if (last !== undefined && at - last < DEPRECATED_USE_WRITE_MS) return;
    written.set(pair, at);
    waiting.set(pair, { coordinate, client, usedAt: new Date(at) });
    writing ??= writeAll();
  };

  return {
    used(deprecated: readonly Deprecation[], client: string) {
      const at = now();
      for (const { coordinate } of deprecated) {
        count?.(coordinate, client);
        record(coordinate, client, at);
      }
    },
    idle: async () => {
      while (writing) await writing;
    },
  };
}

/** Logs a failed write at warn, at most once a minute, with how many failed since the last line. */
function failureLog(logger: Logger, now: () => number) {
  let loggedAt = Number.NEGATIVE_INFINITY;
  let failures = 0;
  return (error: unknown) => {
    failures += 1;
    if (now() - loggedAt < DEPRECATED_USE_WRITE_MS) return;
    loggedAt = now();
    logger.warn(
      { err: error, failures },
      'recording the last uses of deprecated fields failed: each pair is written again at its next use',
    );
    failures = 0;
  };
}
