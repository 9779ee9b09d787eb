import { setTimeout as pause } from 'node:timers/promises';

/**
 * Polls `condition` every `intervalMs` until it holds or `timeoutMs` has passed: a deadline, not a count of polls,
 * since under CI's full parallel run a poll's pause can last far longer than asked. The caller asserts the outcome,
 * so a condition that never holds still fails the test, only later.
 */
export async function waitUntil(condition: () => boolean, { timeoutMs = 30_000, intervalMs = 10 } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await pause(intervalMs);
}
