import type { IncomingMessage } from 'node:http';

/** How much of a User-Agent is kept where one is stored (session lists, audit events). */
export const USER_AGENT_LENGTH = 256;

/** The request's User-Agent, cut to USER_AGENT_LENGTH characters; null without one. */
export function userAgentOf(req: Pick<IncomingMessage, 'headers'>): string | null {
  const value = req.headers['user-agent'];
  return typeof value === 'string' && value !== '' ? value.slice(0, USER_AGENT_LENGTH) : null;
}
