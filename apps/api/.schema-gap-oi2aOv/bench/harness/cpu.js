import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
// CPU time per request: what a scenario costs the server process (and, on PostgreSQL, the database backends
// serving it), read from /proc before and after each timed load, so moving work into SQL does not look free.
const CLOCK_TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
/** utime + stime of a process in milliseconds; 0 when it is gone (or there is no procfs). */
export function cpuMs(pid) {
    try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        // Fields after the command name (which may contain spaces), 1-based from `state` = field 3: utime 14, stime 15.
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
    }
    catch {
        return 0;
    }
}
/** The CPU milliseconds a set of processes used, summed; the processes are read once now and once at `stop()`. */
export function startCpuMeter(pids) {
    const before = new Map(pids.map((pid) => [pid, cpuMs(pid)]));
    return {
        stop: () => [...before].reduce((sum, [pid, start]) => sum + Math.max(0, cpuMs(pid) - start), 0),
    };
}
//# sourceMappingURL=cpu.js.map