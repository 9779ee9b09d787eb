import { findDocumentById, isDatabaseUnavailable, type DocumentRow, type OrganizationRow } from '@latchkey/db';
import { can } from '@latchkey/policy';
import { GraphQLError } from 'graphql';
import { getDocument } from '../domain/documents.js';
import type { DomainRequest } from '../domain/request.js';
import type { RequestScope } from '../domain/request-scope.js';
import type { SignedInCaller } from '@latchkey/auth/tokens';
import { getOrganization } from '../domain/organizations.js';
import { DocumentPolicy, OrganizationPolicy } from '../domain/policies.js';
import type { Subject } from '../domain/subject.js';
import { scopesKey } from '../domain/scopes.js';
import type { DocumentEventKind } from '../domain/document-events.js';
import type { Delivery, Subscriber } from '../events/subscription-hub.js';
import { domainRequest } from './context.js';
import type { GraphQLContext } from './context.js';
import { ErrorCode } from './errors.js';

/** What `DocumentEvent` resolves from. */
export interface DocumentEventPayload {
  kind: DocumentEventKind;
  documentId: string;
  document: DocumentRow | null;
  at: Date;
}

/** One item of a subscription's stream: an event to resolve, or the error that ends the stream. */
export type StreamItem = { payload: DocumentEventPayload } | { error: GraphQLError };

/** What a subscription listens to: an organization's documents, or one document. */
export type StreamTarget = { organization: string } | { documentId: string };

const endWith = (code: string, message: string): StreamItem => ({ error: new GraphQLError(message, { extensions: { code } }) });
const EXPIRED = () => endWith(ErrorCode.UNAUTHENTICATED, 'The access token has expired: subscribe again with a fresh one.');
const SESSION_ENDED = () => endWith(ErrorCode.UNAUTHENTICATED, 'The session this subscription was opened in has ended: sign in again.');
const NO_LONGER_ALLOWED = () => endWith(ErrorCode.FORBIDDEN, 'You may no longer receive these events.');
const DROPPED = () => endWith(ErrorCode.SUBSCRIPTION_DROPPED, 'This subscription was dropped: its events were not being read fast enough.');
const INTERRUPTED = () =>
  endWith(
    ErrorCode.SUBSCRIPTION_INTERRUPTED,
    'This subscription was interrupted: some events could not be delivered. Subscribe again; missed events are not replayed.',
  );
const TOO_MANY = 'Too many open subscriptions for this account on this server.';
const SHUTTING_DOWN = 'This server is shutting down: subscribe again (another instance will answer).';

/** A value read once per event for all of its subscribers on this instance. */
function shared<T>(delivery: Delivery, key: string, read: () => Promise<T>): Promise<T> {
  let value = delivery.memo.shared.get(key) as Promise<T> | undefined;
  if (!value) delivery.memo.shared.set(key, (value = read()));
  return value;
}

/** One open subscription: whose it is, what it watches, and the subscriber its events come from. */
interface Watch {
  context: GraphQLContext;
  caller: SignedInCaller;
  userId: string;
  organization: OrganizationRow;
  /** set when one document is watched: the stream ends after its deletion */
  documentId: string | undefined;
  subscriber: Subscriber;
}

/**
 * Opens a subscription's stream (spec Events 1 with the authorization rules of queries): the caller is checked
 * now (NOT_FOUND for an organization or document they may not see, like queries), then every event is judged
 * on the subscriber's attributes at delivery time. Events they may not see are skipped; losing access, a
 * suspension or the token's expiry ends the stream with one last error.
 */
export async function openDocumentStream(
  context: GraphQLContext,
  target: StreamTarget,
  handler: string,
): Promise<AsyncGenerator<StreamItem>> {
  const { subscriptions } = context.app;
  const caller = context.caller;
  if (!caller) throw new GraphQLError('Sign in to subscribe.', { extensions: { code: ErrorCode.UNAUTHENTICATED } });
  const request = await domainRequest(context, handler);
  const userId = request.subject?.id;
  if (!userId) throw new GraphQLError('This account cannot subscribe.', { extensions: { code: ErrorCode.FORBIDDEN } });
  const { organization, documentId } = await watchedTarget(request, target);

  const subscriber = subscriptions.open(userId, organization.id, documentId ? (event) => event.documentId === documentId : undefined);
  if (!subscriber && subscriptions.closed) throw new GraphQLError(SHUTTING_DOWN, { extensions: { code: ErrorCode.SERVICE_UNAVAILABLE } });
  if (!subscriber) throw new GraphQLError(TOO_MANY, { extensions: { code: ErrorCode.RATE_LIMITED } });
  return closedWithItsSubscriber(stream({ context, caller, userId, organization, documentId, subscriber }), subscriber);
}

/** The organization a subscription watches, and its document when it watches one (NOT_FOUND like queries). */
async function watchedTarget(
  request: DomainRequest,
  target: StreamTarget,
): Promise<{ organization: OrganizationRow; documentId?: string }> {
  if ('organization' in target) return { organization: await getOrganization(request, target.organization, ['organization']) };
  const found = await getDocument(request, target.documentId, ['id']);
  return { organization: found.organization, documentId: found.document.id };
}

/** The subscriber's verdict on one event, read from the database now. */
async function judge(watch: Watch, delivery: Delivery): Promise<StreamItem | 'skip'> {
  const { context, userId, organization } = watch;
  const { database } = context.app;
  const { event } = delivery;
  // Each event's reads have a deadline of their own (shared by the event's subscribers on this instance).
  const view = await shared(delivery, 'view', async () => {
    const deadline = database.deadlineFromNow();
    return { deadline, db: database.until(deadline) };
  });
  // Shared by this user's subscribers whose tokens hold the same scopes (the scopes narrow what the subject may see).
  const scopes = context.app.subjects.scopesOf(watch.caller);
  const subject: Promise<Subject | null> = shared(delivery, `subject:${userId}:${scopesKey(scopes)}`, () =>
    context.app.subjects.fresh(view.db, watch.caller, scopes),
  );
  const now = new Date();
  const current = await subject;
  if (!current || current.suspended || !can(current, OrganizationPolicy.view, organization)) return NO_LONGER_ALLOWED();
  let document: DocumentRow | null = null;
  if (event.kind === 'DELETED') {
    // Judged on its last state: a VIEWER never hears of a draft, even of its deletion.
    const last = {
      organizationId: event.organizationId,
      ownerId: event.ownerId,
      status: event.status,
      legalHold: false,
      embargoUntil: event.embargoUntil ? new Date(event.embargoUntil) : null,
    };
    if (!can(current, DocumentPolicy.view, last, now)) return 'skip';
  } else {
    document = (await shared(delivery, 'document', () => findDocumentById(view.db, event.documentId))) ?? null;
    if (!document || !can(current, DocumentPolicy.view, document, now)) return 'skip';
  }
  // Field rules of this event's document see the same fresh subject (and fresh loaders).
  const scope: RequestScope = { deadline: view.deadline, requestId: context.requestId, req: context.req };
  context.app.subjects.prime(scope, subject);
  context.eventScope = scope;
  return { payload: { kind: event.kind, documentId: event.documentId, document, at: new Date(event.at) } };
}

/** What ends a stream besides its events: the token's expiry, and the end of the session it was issued in. */
function streamEnds(watch: Watch): { ended: Promise<'expired' | 'session ended'>; stop(): void } {
  const { caller, context } = watch;
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), Math.max(0, caller.expiresAt * 1000 - Date.now()));
    timer.unref();
  });
  // Ending the session the token was issued in ends the stream as soon as this instance learns of it (the ended
  // list is read every second), whether or not an event arrives.
  let stopWatching = () => {};
  const sessionEnded = new Promise<'session ended'>((resolve) => {
    if (caller.sessionId) stopWatching = context.app.sessions.ended.whenEnded(caller.sessionId, () => resolve('session ended'));
  });
  return {
    ended: Promise.race([expiry, sessionEnded]),
    stop() {
      clearTimeout(timer);
      stopWatching();
    },
  };
}

async function* stream(watch: Watch): AsyncGenerator<StreamItem> {
  const { subscriber, documentId } = watch;
  const expiresAt = watch.caller.expiresAt * 1000;
  const ends = streamEnds(watch);
  try {
    for (;;) {
      const next = await Promise.race([subscriber.next(), ends.ended]);
      if (next === 'session ended') {
        yield SESSION_ENDED();
        return;
      }
      if (next === 'expired' || Date.now() >= expiresAt) {
        yield EXPIRED();
        return;
      }
      if ('end' in next) {
        if (next.end === 'overflow') yield DROPPED();
        else if (next.end === 'interrupted') yield INTERRUPTED();
        return;
      }
      let verdict: StreamItem | 'skip';
      try {
        verdict = await judge(watch, next);
      } catch (error) {
        // An event that cannot be judged (the database went away) cannot be delivered: say so, and end.
        if (!isDatabaseUnavailable(error)) throw error;
        yield INTERRUPTED();
        return;
      }
      if (verdict === 'skip') continue;
      yield verdict;
      if ('error' in verdict || (documentId && next.event.kind === 'DELETED')) return;
    }
  } finally {
    ends.stop();
    subscriber.close();
  }
}

/**
 * An async generator parked at an `await` cannot be returned until it moves on: a client that leaves while no
 * event is coming would keep its subscription (and its memory) until the next event. Closing the subscriber
 * first wakes it, so it ends at once and its `finally` runs.
 */
function closedWithItsSubscriber(generator: AsyncGenerator<StreamItem>, subscriber: Subscriber): AsyncGenerator<StreamItem> {
  return {
    next: () => generator.next(),
    return: (value) => {
      subscriber.close();
      return generator.return(value);
    },
    throw: (error) => {
      subscriber.close();
      return generator.throw(error);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** The subscription field's resolve: an event's payload, or the error that ends the stream. */
export function resolveStreamItem(item: StreamItem): DocumentEventPayload {
  if ('error' in item) throw item.error;
  return item.payload;
}
