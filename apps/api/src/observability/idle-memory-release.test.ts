import { getHeapStatistics } from 'node:v8';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createMemoryReleaser,
  startIdleMemoryRelease,
  type IdleMemoryReleaseOptions,
  type ProcessReadings,
} from './idle-memory-release.js';

const MiB = 1024 * 1024;

const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
  vi.useRealTimers();
});

/**
 * The release started (on fake timers) for a process whose CPU time and heap the test sets: 40 MiB of heap at the
 * start and after every release, which it counts.
 */
function startOnFakeProcess(options: IdleMemoryReleaseOptions) {
  vi.useFakeTimers();
  const state = { cpuMicros: 0, heapBytes: 40 * MiB, releases: 0 };
  const readings: ProcessReadings = {
    cpuMicros: () => state.cpuMicros,
    heapBytes: () => state.heapBytes,
    release: async () => {
      state.releases++;
      state.heapBytes = 40 * MiB;
    },
  };
  const stop = startIdleMemoryRelease(options, readings);
  stops.push(stop);
  return { state, stop };
}

describe('idle memory release (resident memory after a run)', () => {
  it('releases once the process has been idle for idleForMs and its heap has grown, and only then', async () => {
    const { state } = startOnFakeProcess({ intervalMs: 1000, idleForMs: 1000, idleCpuShare: 0.01, minGrowthBytes: 32 * MiB });

    // Under load: the heap grows, the process is busy (500 ms of CPU a second): nothing is released.
    state.heapBytes = 200 * MiB;
    for (let second = 0; second < 3; second++) {
      state.cpuMicros += 500_000;
      await vi.advanceTimersByTimeAsync(1000);
    }
    expect(state.releases).toBe(0);

    // The load ends: one idle interval later, one release.
    await vi.advanceTimersByTimeAsync(1000);
    expect(state.releases).toBe(1);

    // Still idle, and the heap is back to its size after the release: no second release.
    for (let second = 0; second < 5; second++) await vi.advanceTimersByTimeAsync(1000);
    expect(state.releases).toBe(1);
  });

  it('an idle process whose heap has not grown by minGrowthBytes is left alone', async () => {
    const { state } = startOnFakeProcess({ intervalMs: 1000, idleForMs: 1000, minGrowthBytes: 32 * MiB });
    state.heapBytes = 40 * MiB + 31 * MiB;
    for (let second = 0; second < 5; second++) await vi.advanceTimersByTimeAsync(1000);
    expect(state.releases).toBe(0);
    state.heapBytes = 40 * MiB + 33 * MiB;
    await vi.advanceTimersByTimeAsync(1000);
    expect(state.releases).toBe(1);
  });

  it('light background work (under idleCpuShare of a core) still counts as idle; more than that does not', async () => {
    const { state } = startOnFakeProcess({ intervalMs: 1000, idleForMs: 1000, idleCpuShare: 0.01 });
    state.heapBytes = 100 * MiB;
    state.cpuMicros += 20_000; // 2% of the interval
    await vi.advanceTimersByTimeAsync(1000);
    expect(state.releases).toBe(0);
    state.cpuMicros += 5_000; // 0.5%
    await vi.advanceTimersByTimeAsync(1000);
    expect(state.releases).toBe(1);
  });

  it('a lull shorter than idleForMs between bursts keeps the memory; a longer one releases it', async () => {
    const { state } = startOnFakeProcess({ intervalMs: 1000, idleForMs: 3000, idleCpuShare: 0.01 });
    state.heapBytes = 200 * MiB;
    for (let burst = 0; burst < 3; burst++) {
      state.cpuMicros += 500_000;
      await vi.advanceTimersByTimeAsync(1000); // busy
      await vi.advanceTimersByTimeAsync(2000); // two idle seconds: a lull
    }
    expect(state.releases).toBe(0);
    await vi.advanceTimersByTimeAsync(1000); // the third idle second in a row
    expect(state.releases).toBe(1);
  });

  it('after the stop function, nothing is released', async () => {
    const { state, stop } = startOnFakeProcess({ intervalMs: 1000, idleForMs: 1000 });
    stop();
    state.heapBytes = 500 * MiB;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(state.releases).toBe(0);
  });

  it("the memory releaser gives this process's garbage back: V8's committed heap shrinks", async () => {
    const release = createMemoryReleaser();
    // Garbage that outlives young collections, as objects of requests in flight under load do: kept while more is
    // allocated (so it is promoted to the old generation), then dropped.
    let kept: number[][] = [];
    for (let index = 0; index < 400_000; index++) {
      kept.push([index, index + 1, index + 2, index + 3, index + 4, index + 5, index + 6, index + 7]);
      if (index % 50_000 === 0) await new Promise((done) => setImmediate(done));
    }
    expect(kept.length).toBe(400_000);
    const grown = getHeapStatistics().total_heap_size;
    kept = [];
    await release();
    const after = getHeapStatistics().total_heap_size;
    expect(grown - after).toBeGreaterThan(24 * MiB);
  });
});
