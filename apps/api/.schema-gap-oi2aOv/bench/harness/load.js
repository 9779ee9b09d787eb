import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { startCpuMeter } from './cpu.js';
import { isRunning } from './processes.js';
import { CONNECTIONS } from './settings.js';
export function scenario(name, server, query, token) {
    const headers = { 'content-type': 'application/json' };
    if (token)
        headers.authorization = `Bearer ${token}`;
    return { name, server, headers, body: JSON.stringify({ query }) };
}
/** A request body of its own (variables, persisted-query extensions). */
export function scenarioWithBody(name, server, body, token) {
    const headers = { 'content-type': 'application/json' };
    if (token)
        headers.authorization = `Bearer ${token}`;
    return { name, server, headers, body: JSON.stringify(body) };
}
// One request up front, so the benchmark never ends up measuring error answers.
// Every top-level field must be non-null too: a rejected token would make
// `viewer` null rather than an HTTP error.
export async function check(s) {
    const res = await fetch(s.server.url, { method: 'POST', headers: s.headers, body: s.body });
    const text = await res.text();
    let json;
    try {
        json = JSON.parse(text);
    }
    catch {
        // reported below
    }
    const data = isObject(json) ? json.data : undefined;
    const ok = res.status === 200 &&
        isObject(json) &&
        !('errors' in json) &&
        isObject(data) &&
        Object.values(data).every((v) => v !== null && v !== undefined);
    if (!ok)
        throw new Error(`scenario "${s.name}" check failed: HTTP ${res.status} ${text.slice(0, 500)}`);
}
export async function load(server, requests, durationS) {
    const serverCpu = startCpuMeter([server.child.pid]);
    const backends = server.backendPids ? startCpuMeter(await server.backendPids()) : undefined;
    const result = await autocannon({
        url: server.url,
        connections: CONNECTIONS,
        duration: durationS,
        // A sequence that every connection cycles through; one entry for a measured scenario.
        requests: requests.map((s) => ({ method: 'POST', headers: s.headers, body: s.body })),
    });
    if (!isRunning(server.child))
        throw new Error(`${server.name}: exited during the benchmark`);
    const served = Math.max(1, result.requests.total);
    return {
        serverCpuMs: serverCpu.stop() / served,
        databaseCpuMs: backends ? backends.stop() / served : null,
        reqPerSec: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        non2xx: result.non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
    };
}
function median(values) {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
export function summarize(s, rounds) {
    const sum = (key) => rounds.reduce((acc, r) => acc + r[key], 0);
    return {
        scenario: s.name,
        server: s.server.name,
        reqPerSec: median(rounds.map((r) => r.reqPerSec)),
        p50: median(rounds.map((r) => r.p50)),
        p99: median(rounds.map((r) => r.p99)),
        non2xx: sum('non2xx'),
        errors: sum('errors'),
        timeouts: sum('timeouts'),
        serverCpuMs: median(rounds.map((r) => r.serverCpuMs)),
        databaseCpuMs: rounds.some((r) => r.databaseCpuMs === null) ? null : median(rounds.map((r) => r.databaseCpuMs)),
        rounds,
    };
}
export function rssMiB(pid) {
    try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
        return kb ? Number(kb) / 1024 : null;
    }
    catch {
        return null; // no procfs (not Linux) or the process is gone
    }
}
function isObject(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}
//# sourceMappingURL=load.js.map