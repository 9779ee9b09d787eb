import { listen, notify, type DatabaseHandle } from '@latchkey/db';
import { Redis } from 'ioredis';
import { parseDocumentEvent, type DocumentEvent, type EventBus } from './types.js';

const CHANNEL = 'latchkey_document_events';

type Listener = (event: DocumentEvent) => void;

function listeners() {
  const set = new Set<Listener>();
  return {
    add(listener: Listener) {
      set.add(listener);
      return () => void set.delete(listener);
    },
    emit(event: DocumentEvent) {
      for (const listener of set) listener(event);
    },
  };
}

/** In this process only: the embedded single-instance default. */
export function createMemoryBus(): EventBus {
  const local = listeners();
  return {
    kind: 'memory',
    publish: async (event) => local.emit(event),
    subscribe: local.add,
    close: async () => undefined,
  };
}

/**
 * PostgreSQL LISTEN/NOTIFY on one channel: a mutation on one instance reaches subscribers on all of them.
 * Events come back to the publishing instance through its own LISTEN, so every instance delivers from one path.
 */
export async function createPostgresBus(database: DatabaseHandle, onInvalid: (payload: string) => void): Promise<EventBus> {
  const local = listeners();
  const stop = await listen(database, CHANNEL, (payload) => {
    const event = parseDocumentEvent(payload);
    if (event) local.emit(event);
    else onInvalid(payload);
  });
  return {
    kind: 'postgres',
    publish: (event) => notify(database, CHANNEL, JSON.stringify(event)),
    subscribe: local.add,
    close: stop,
  };
}

/** Redis pub/sub (REDIS_URL): one connection publishes, a second one subscribes (Redis requires it). */
export async function createRedisBus(url: string, onInvalid: (payload: string) => void, onError: (error: Error) => void = () => {}): Promise<EventBus> {
  const local = listeners();
  const options = { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: true } as const;
  const publisher = new Redis(url, options);
  const subscriber = new Redis(url, options);
  // Connection trouble after start-up is reported (ioredis reconnects and re-subscribes by itself).
  publisher.on('error', onError);
  subscriber.on('error', onError);
  try {
    await Promise.all([publisher.connect(), subscriber.connect()]);
    await subscriber.subscribe(CHANNEL);
  } catch (error) {
    publisher.disconnect();
    subscriber.disconnect();
    throw error;
  }
  subscriber.on('message', (channel: string, payload: string) => {
    if (channel !== CHANNEL) return;
    const event = parseDocumentEvent(payload);
    if (event) local.emit(event);
    else onInvalid(payload);
  });
  return {
    kind: 'redis',
    publish: async (event) => void (await publisher.publish(CHANNEL, JSON.stringify(event))),
    subscribe: local.add,
    async close() {
      await Promise.allSettled([subscriber.quit(), publisher.quit()]);
    },
  };
}
