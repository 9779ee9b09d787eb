import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LabelledHistogram } from './labelled-histogram.js';

const BUCKETS = [0.001, 0.01, 0.1, 1, 10];

/** The exposition of one metric, its HELP/TYPE lines and samples, with the metric's name made neutral. */
async function exposition(registry: Registry, name: string): Promise<string> {
  const text = await registry.getSingleMetricAsString(name);
  return text.replaceAll(name, 'metric');
}

describe('LabelledHistogram (the HTTP duration histogram)', () => {
  it("exposes exactly what prom-client's own Histogram exposes for the same observations, bucket bounds included", async () => {
    const registry = new Registry();
    const fast = new LabelledHistogram('fast_seconds', 'durations', ['route', 'status'], BUCKETS, registry);
    const reference = new Histogram({
      name: 'reference_seconds',
      help: 'durations',
      labelNames: ['route', 'status'],
      buckets: BUCKETS,
      registers: [registry],
    });
    // Values on the bounds themselves (a bound is inclusive), between them, below the first and past the last.
    const values = [0, 0.001, 0.0011, 0.01, 0.05, 0.1, 0.9999, 1, 5, 10, 10.0001, 300];
    for (const [i, value] of values.entries()) {
      const [route, status] = i % 3 === 0 ? ['/graphql', '200'] : i % 3 === 1 ? ['/api/documents/:id', '404'] : ['other', 'aborted'];
      fast.observe(route, status, value);
      reference.observe({ route, status }, value);
    }
    expect(await exposition(registry, 'fast_seconds')).toBe(await exposition(registry, 'reference_seconds'));
  });

  it('starts empty and forgets everything on reset', async () => {
    const registry = new Registry();
    const fast = new LabelledHistogram('fast_seconds', 'durations', ['route', 'status'], BUCKETS, registry);
    expect(await registry.getSingleMetricAsString('fast_seconds')).not.toContain('fast_seconds_count');
    fast.observe('/graphql', '200', 0.2);
    expect(await registry.getSingleMetricAsString('fast_seconds')).toContain('fast_seconds_count{route="/graphql",status="200"} 1');
    fast.reset();
    expect(await registry.getSingleMetricAsString('fast_seconds')).not.toContain('fast_seconds_count');
  });
});
