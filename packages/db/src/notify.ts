import { sql } from 'drizzle-orm';
import { driverOf, type DatabaseHandle } from './client.js';

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

function checkChannel(channel: string): void {
  if (!CHANNEL.test(channel)) throw new RangeError('a notification channel is a lower-case SQL identifier (letters, digits, _)');
}

/**
 * PostgreSQL LISTEN: `onPayload` receives every NOTIFY on `channel` from any session (other instances
 * included, and this one's own). PostgreSQL: a dedicated connection outside the pool, which postgres-js
 * re-establishes (and re-LISTENs) after a drop, and which is made again after a known outage; notifications
 * sent while it is down are lost (a reader that must not miss anything also polls). PGlite: the embedded instance. Resolves once listening, with
 * the function that stops it.
 */
export async function listen(handle: DatabaseHandle, channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
  checkChannel(channel);
  const driver = driverOf(handle);
  if (driver.kind === 'postgres') return driver.pool.listen(channel, onPayload);
  const stop = await driver.client.listen(channel, onPayload);
  return stop;
}

/** PostgreSQL NOTIFY (`pg_notify`, so the payload is a parameter); delivered when the current transaction commits. */
export async function notify(handle: DatabaseHandle, channel: string, payload: string): Promise<void> {
  checkChannel(channel);
  if (Buffer.byteLength(payload) >= 8000) throw new RangeError('a notification payload must be shorter than 8000 bytes');
  await handle.db.execute(sql`select pg_notify(${channel}, ${payload})`);
}
