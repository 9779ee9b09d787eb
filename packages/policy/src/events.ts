import { channel } from 'node:diagnostics_channel';
import type { DenialEvent } from './types.js';

/** diagnostics_channel name every denial is published on. */
export const DENIAL_CHANNEL = 'latchkey:policy:denied';

const diagnostics = channel(DENIAL_CHANNEL);
type Listener = (event: DenialEvent) => void;
const listeners = new Set<Listener>();

/**
 * The in-process observable stream of denials. Returns the unsubscribe function. A listener that
 * throws is not allowed to break the request that was denied.
 */
export function onDenied(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function publishDenial(event: DenialEvent): void {
  const frozen = Object.freeze(event);
  for (const listener of listeners) {
    try {
      listener(frozen);
    } catch {
      // observers must not change the outcome of a decision
    }
  }
  if (diagnostics.hasSubscribers) diagnostics.publish(frozen);
}
