import { listAuditEventsOf, type Database } from '@latchkey/db';
import { SIGN_IN_EVENT_TYPES } from '../audit/index.js';
import type { FactorIdentity } from '../factors/index.js';
import { labelOf } from './factor-names.js';
import { escapeHtml } from './html.js';

/** How many of their own sign-in events the account page shows. */
export const SIGN_IN_HISTORY_LENGTH = 20;

const OUTCOMES: Record<(typeof SIGN_IN_EVENT_TYPES)[number], string> = {
  'sign_in.succeeded': 'signed in',
  'sign_in.failed': 'failed',
  'step_up.succeeded': 'stepped up',
  lockout: 'locked out',
};

/**
 * The account page's "Recent sign-ins": the account's own latest sign-in events from the audit trail (time,
 * method, outcome, address, browser). Events still in the writer's queue appear a moment later.
 */
export async function signInHistorySection(db: Database, factors: readonly FactorIdentity[], userId: string): Promise<string> {
  const events = await listAuditEventsOf(db, userId, SIGN_IN_EVENT_TYPES, SIGN_IN_HISTORY_LENGTH);
  if (events.length === 0) return '<h2>Recent sign-ins</h2><p id="sign-in-history">No sign-ins recorded yet.</p>';
  const rows = events.map((event) => {
    const method = labelOf(factors, String((event.details as { method?: unknown }).method));
    const outcome = OUTCOMES[event.type as keyof typeof OUTCOMES] ?? event.type;
    const time = `${event.time.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
    return `<tr><td>${time}</td><td>${escapeHtml(method)}</td><td>${escapeHtml(outcome)}</td><td>${escapeHtml(event.address ?? '')}</td><td>${escapeHtml(event.userAgent ?? '')}</td></tr>`;
  });
  return `<h2>Recent sign-ins</h2>
<table id="sign-in-history"><thead><tr><th>time</th><th>method</th><th>outcome</th><th>address</th><th>browser</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table>`;
}
