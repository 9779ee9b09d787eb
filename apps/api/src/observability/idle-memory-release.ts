import { Session } from 'node:inspector';
import { getHeapStatistics } from 'node:v8';

export interface IdleMemoryReleaseOptions {
  /** how often the process looks at its own CPU time and heap. @default 5000 */
  intervalMs?: number;
  /**
   * how long the process must have been idle (whole intervals in a row) before it releases: a short lull between
   * bursts keeps its memory, since a release also empties what makes the next burst fast (the young generation's
   * size; measured: a status load started right after a release had its p99 at 41 ms, a round later 12 ms).
   * @default 15000
   */
  idleForMs?: number;
  /**
   * below this share of one core over the last interval, the process counts as idle. An idle server here used 1-4% of
   * a core on its own timers (log flushes, the ended-sessions poll, the pool's health checks, garbage collection).
   * @default 0.05
   */
  idleCpuShare?: number;
  /** release only once V8's committed heap is at least this much larger than after the last release. @default 32 MiB */
  minGrowthBytes?: number;
  /** told the heap sizes before and after each release */
  onRelease?: (release: { heapBefore: number; heapAfter: number; ms: number }) => void;
}

/** What the decision reads; the defaults read this process (tests pass their own). */
export interface ProcessReadings {
  /** CPU time used by the process so far, in microseconds */
  cpuMicros(): number;
  /** V8's committed heap, in bytes */
  heapBytes(): number;
  /** collects all garbage and gives memory back to the operating system */
  release(): Promise<void>;
}

/**
 * V8's "memory reducer": a full collection that also shrinks the young generation and returns free pages (what
 * `HeapProfiler.collectGarbage` asks for). A plain forced collection (`gc()`) leaves those committed: after a load of
 * document pages it took a server from 222 to 191 MiB resident, this from 228 to 114 MiB.
 *
 * The in-process inspector session is connected here, once, and stays connected (it opens no port and enables no
 * domain, so it costs nothing while unused). Measured on Node 20: a session connected and asked in the same task
 * never answered, and one disconnected from inside its answer stopped the event loop; connected ahead of time and
 * left connected, it answers every time and the process still exits when its work is done.
 */
export function createMemoryReleaser(): () => Promise<void> {
  const session = new Session();
  session.connect();
  return () =>
    new Promise<void>((resolve, reject) => {
      session.post('HeapProfiler.collectGarbage', (error) => (error ? reject(error) : resolve()));
    });
}

function readingsOfThisProcess(): ProcessReadings {
  return {
    cpuMicros: () => {
      const { user, system } = process.cpuUsage();
      return user + system;
    },
    heapBytes: () => getHeapStatistics().total_heap_size,
    release: createMemoryReleaser(),
  };
}

/**
 * Gives memory back once a burst of load is over. Under concurrent requests, objects of requests still in flight
 * survive young collections and are promoted; the old generation then holds that garbage, and the process its
 * memory, until V8 decides on its own to reduce memory (in one bench run of three it had not done so 30 s after the
 * load: 282 MiB resident, against 120-125 MiB in the other two). Here, every `intervalMs` the process
 * looks at the CPU it used: once it has been idle for `idleForMs`, and only when the committed heap has grown by
 * `minGrowthBytes` since the last release, it collects everything and returns the free pages (0.1-0.25 s on the main
 * thread, spent while nothing else runs). Nothing is added to any request's path. Returns the function that stops it.
 */
export function startIdleMemoryRelease(
  options: IdleMemoryReleaseOptions = {},
  readings: ProcessReadings = readingsOfThisProcess(),
): () => void {
  const intervalMs = options.intervalMs ?? 5000;
  const idleForMs = options.idleForMs ?? 15_000;
  const idleCpuShare = options.idleCpuShare ?? 0.05;
  const minGrowthBytes = options.minGrowthBytes ?? 32 * 1024 * 1024;
  let lastCpu = readings.cpuMicros();
  let baseline = readings.heapBytes();
  let releasing = false;
  /** idle intervals in a row */
  let quiet = 0;

  const look = () => {
    const cpu = readings.cpuMicros();
    const usedShare = (cpu - lastCpu) / 1000 / intervalMs;
    lastCpu = cpu;
    quiet = usedShare < idleCpuShare ? quiet + 1 : 0;
    if (releasing || quiet * intervalMs < idleForMs) return;
    const heapBefore = readings.heapBytes();
    if (heapBefore - baseline < minGrowthBytes) return;
    releasing = true;
    const startedAt = performance.now();
    readings.release().then(
      () => {
        releasing = false;
        baseline = readings.heapBytes();
        // The release's own CPU is not load: the next interval starts counting after it.
        lastCpu = readings.cpuMicros();
        options.onRelease?.({ heapBefore, heapAfter: baseline, ms: performance.now() - startedAt });
      },
      () => {
        // Nothing was released (an inspector refused the session): try again after the next idle interval.
        releasing = false;
      },
    );
  };
  const timer = setInterval(look, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
