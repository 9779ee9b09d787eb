import { expect } from 'vitest';

/** One sample of Prometheus' text format: the line of `name` whose labels are exactly `labels` (0 when absent). */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map(([, key, value]) => [key, value]),
    );
    const keys = Object.keys(labels);
    if (keys.length === Object.keys(found).length && keys.every((key) => found[key] === labels[key])) return Number(match[3]);
  }
  return 0;
}

/** GET /metrics of a metrics listener (METRICS_PORT), as Prometheus scrapes it. */
export async function scrapeMetrics(metricsUrl: string): Promise<string> {
  const response = await fetch(`${metricsUrl}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

/**
 * Scrapes until `check` holds: gauges and counters follow events the server handles after it answered. The
 * deadline is far above any real latency; the error shows the service's own samples.
 */
export async function scrapeMetricsUntil(
  metricsUrl: string,
  check: (text: string) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<string> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const text = await scrapeMetrics(metricsUrl);
    if (check(text)) return text;
    if (performance.now() > deadline) {
      const own = text.split('\n').filter((line) => line.startsWith('latchkey_'));
      throw new Error(`metrics never showed ${what}:\n${own.join('\n')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Waits until the service behind `metricsUrl` holds exactly `count` subscriptions (its latchkey_subscriptions_open
 * gauge): a server opens a subscription some time after the client sent it, and only events from then on reach it.
 */
export async function untilSubscriptionsOpen(metricsUrl: string, count: number, timeoutMs?: number): Promise<void> {
  await scrapeMetricsUntil(
    metricsUrl,
    (text) => sample(text, 'latchkey_subscriptions_open') === count,
    `${count} open subscription(s) at ${metricsUrl}`,
    timeoutMs,
  );
}
