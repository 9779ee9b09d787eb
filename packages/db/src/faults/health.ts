/**
 * What the rest of the service knows about the database: reachable, or in a known outage. During an outage
 * requests that need the database are refused at once (SERVICE_UNAVAILABLE, Retry-After) instead of each
 * waiting out its deadline; a probe runs meanwhile, so the first request after the database is back succeeds
 * without a restart.
 */
/** What a client refused for an outage is told to wait (Retry-After): the probe runs every 250 ms. */
export const RETRY_AFTER_SECONDS = 1;

/** The pause between probes during an outage: the database is known to be back at most this long after it is. */
export const PROBE_INTERVAL_MS = 250;

export interface DatabaseHealth {
  /** false while an outage is known */
  readonly available: boolean;
  /** called with the new state on every change; returns the unsubscribe function */
  onChange(listener: (available: boolean) => void): () => void;
}

export interface HealthMonitorOptions {
  /** resolves when the database answers a trivial statement on a fresh connection; rejects or hangs otherwise */
  probe(timeoutMs: number): Promise<void>;
  /** how long one probe may take before it counts as failed. @default 1000 */
  probeTimeoutMs?: number;
  /** the pause between probes during an outage. @default PROBE_INTERVAL_MS */
  probeIntervalMs?: number;
  /** told when an outage becomes known (reject what is pending, drop the pool's connections) */
  onOutage?: () => void;
}

export interface HealthMonitor extends DatabaseHealth {
  /**
   * Something looked wrong (a connection error, a statement waiting long, a missed deadline), or right during an
   * outage (a readiness ping answered): probe now. An outage is declared only if the probe fails too, so one slow
   * statement or one killed backend is not an outage; it ends when a probe succeeds.
   */
  suspect(): void;
  close(): void;
}

/** The embedded database lives in this process: it has no outage to know about. */
export const ALWAYS_AVAILABLE: DatabaseHealth = Object.freeze({
  available: true,
  onChange: () => () => undefined,
});

export function createHealthMonitor(options: HealthMonitorOptions): HealthMonitor {
  const probeTimeoutMs = options.probeTimeoutMs ?? 1000;
  const probeIntervalMs = options.probeIntervalMs ?? PROBE_INTERVAL_MS;
  const listeners = new Set<(available: boolean) => void>();
  let available = true;
  let probing = false;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  function set(next: boolean): void {
    if (next === available) return;
    available = next;
    if (!next) options.onOutage?.();
    for (const listener of [...listeners]) listener(next);
  }

  async function probeOnce(): Promise<boolean> {
    let timeout: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        options.probe(probeTimeoutMs),
        new Promise<never>((_, reject) => (timeout = setTimeout(() => reject(new Error('probe timed out')), probeTimeoutMs))),
      ]);
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timeout);
    }
  }

  async function probe(): Promise<void> {
    if (probing || closed) return;
    probing = true;
    try {
      const ok = await probeOnce();
      if (closed) return;
      set(ok);
      // During an outage keep probing until the database answers again.
      clearTimeout(timer);
      if (!ok) timer = setTimeout(() => void probe(), probeIntervalMs).unref();
    } finally {
      probing = false;
    }
  }

  return {
    get available() {
      return available;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    suspect() {
      void probe();
    },
    close() {
      closed = true;
      clearTimeout(timer);
      listeners.clear();
    },
  };
}
