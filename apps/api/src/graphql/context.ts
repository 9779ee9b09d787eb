import type { Database } from '@latchkey/db';
import type { LoaderFactory } from '../domain/loaders.js';
import type { SubjectLoader } from '../domain/subjects.js';
import type { YogaInitialContext } from 'graphql-yoga';
import type { Caller } from '../principal/principal.js';
import type { DocumentEventRecorder } from '../events/outbox.js';
import type { SubscriptionHub } from '../events/subscription-hub.js';

/** What resolvers may use; built once at start-up. */
export interface AppServices {
  db: Database;
  service: { name: string; version: string };
  /** the caller's volatile attributes, loaded once per request */
  subjects: SubjectLoader;
  /** batched lookups (organizations, users, memberships), one set per request */
  loaders: LoaderFactory;
  /** records document changes in the event outbox (subscriptions) */
  events: DocumentEventRecorder;
  /** this instance's subscriptions */
  subscriptions: SubscriptionHub;
}

/** What the context factory adds to Yoga's initial context. */
export interface RequestContext {
  /** the verified caller, or null for a guest (spec Authentication 2) */
  caller: Caller;
  /** a credential was presented but refused: still a guest, told so in the error */
  credentialRejected: boolean;
  requestId: string;
  app: AppServices;
  /** set by a subscription before each event is resolved: the key of that event's fresh memos */
  eventScope?: object;
}

export type GraphQLContext = YogaInitialContext & RequestContext;
