import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { startCpuMeter } from './cpu.js';
import { isRunning, pinBesideLoadGenerator, pinDatabase } from './processes.js';
import type { Server } from './servers.js';
import { CONNECTIONS } from './settings.js';

// What one measurement is: a scenario (a request to one server), its check, a timed load of it, and the
// medians of its rounds.

export interface Scenario {
  name: string;
  server: Server;
  headers: Record<string, string>;
  body: string;
}

export function scenario(name: string, server: Server, query: string, token?: string): Scenario {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  return { name, server, headers, body: JSON.stringify({ query }) };
}

/** A request body of its own (variables, persisted-query extensions). */
export function scenarioWithBody(name: string, server: Server, body: Record<string, unknown>, token?: string): Scenario {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  return { name, server, headers, body: JSON.stringify(body) };
}

export interface Sample {
  reqPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number; // connection errors, timeouts included
  timeouts: number;
  /** the server process's CPU time per request served, ms */
  serverCpuMs: number;
  /** the database backends' CPU time per request served, ms (PostgreSQL only; null on PGlite, which runs in the server) */
  databaseCpuMs: number | null;
}

export interface Summary extends Sample {
  scenario: string;
  server: string;
  rounds: Sample[];
}

// One request up front, so the benchmark never ends up measuring error answers.
// Every top-level field must be non-null too: a rejected token would make
// `viewer` null rather than an HTTP error.
export async function check(s: Scenario): Promise<void> {
  const res = await fetch(s.server.url, { method: 'POST', headers: s.headers, body: s.body });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // reported below
  }
  const data = isObject(json) ? json.data : undefined;
  const ok =
    res.status === 200 &&
    isObject(json) &&
    !('errors' in json) &&
    isObject(data) &&
    Object.values(data).every((v) => v !== null && v !== undefined);
  if (!ok) throw new Error(`scenario "${s.name}" check failed: HTTP ${res.status} ${text.slice(0, 500)}`);
}

export async function load(server: Server, requests: Scenario[], durationS: number): Promise<Sample> {
  const serverCpu = startCpuMeter([server.child.pid!]);
  const backendPids = server.backendPids ? await server.backendPids() : undefined;
  if (backendPids && pinDatabase) pinBesideLoadGenerator(backendPids);
  const backends = backendPids ? startCpuMeter(backendPids) : undefined;
  const result = await autocannon({
    url: server.url,
    connections: CONNECTIONS,
    duration: durationS,
    // A sequence that every connection cycles through; one entry for a measured scenario.
    requests: requests.map((s) => ({ method: 'POST' as const, headers: s.headers, body: s.body })),
  });
  if (!isRunning(server.child)) throw new Error(`${server.name}: exited during the benchmark`);
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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summarize(s: Scenario, rounds: Sample[]): Summary {
  const sum = (key: 'non2xx' | 'errors' | 'timeouts') => rounds.reduce((acc, r) => acc + r[key], 0);
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
    databaseCpuMs: rounds.some((r) => r.databaseCpuMs === null) ? null : median(rounds.map((r) => r.databaseCpuMs!)),
    rounds,
  };
}

/**
 * Server CPU per request of `on` against `off`: the ratio of the medians, the lowest and highest of the rounds paired
 * in order, and a distribution-free interval of the paired ratios' median (order statistics: the widest pair of ranks
 * k and n + 1 - k that still holds the median with at least 90% confidence, whatever the rounds' distribution).
 */
export function pairedServerCpu(on: Summary, off: Summary): { median: number; low: number; high: number; interval: [number, number] } {
  const paired = on.rounds.map((round, i) => round.serverCpuMs / off.rounds[i]!.serverCpuMs).sort((a, b) => a - b);
  const k = medianRank(paired.length, 0.9);
  return {
    median: on.serverCpuMs / off.serverCpuMs,
    low: paired[0]!,
    high: paired.at(-1)!,
    interval: [paired[k - 1]!, paired[paired.length - k]!],
  };
}

/** The largest rank k (at least 1) whose order statistics k and n + 1 - k hold the median with `confidence`. */
function medianRank(n: number, confidence: number): number {
  const binomial = (i: number) => {
    let c = 1;
    for (let j = 0; j < i; j += 1) c = (c * (n - j)) / (j + 1);
    return c / 2 ** n;
  };
  let k = 1;
  let tail = binomial(0); // P(fewer than k rounds fall below the median)
  while (k < n / 2 && 1 - 2 * (tail + binomial(k)) >= confidence) {
    tail += binomial(k);
    k += 1;
  }
  return k;
}

export function rssMiB(pid: number | undefined): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb ? Number(kb) / 1024 : null;
  } catch {
    return null; // no procfs (not Linux) or the process is gone
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
