import type { DocumentListQuery } from '@latchkey/db';
import { describe, expect, it } from 'vitest';
import { sameList, sameVisibility, VisibilityGuesses } from './visibility-guesses.js';

const now = new Date('2026-11-28T10:00:00Z');
const page: DocumentListQuery = {
  visibility: { everything: false, anyStatusIn: ['a', 'b'], publishedIn: ['c'], now },
  organizationSlug: 'acme',
  statuses: ['DRAFT', 'PUBLISHED'],
  after: { createdAt: '2026-11-01 10:00:00.123456+00', id: '5f0c1f9e-0000-4000-8000-000000000001' },
  limit: 21,
  withOwners: true,
};

describe("Authorization 15: rows read ahead with the caller answer only the very list the caller's policy asks for", () => {
  it('the same list whatever the instant and the order of the organizations', () => {
    const later = { ...page, visibility: { everything: false as const, anyStatusIn: ['b', 'a'], publishedIn: ['c'], now: new Date() } };
    expect(sameList(page, later)).toBe(true);
  });

  it.each<[string, Partial<DocumentListQuery>]>([
    ['a role lost (an organization fewer)', { visibility: { everything: false, anyStatusIn: ['a'], publishedIn: ['c'], now } }],
    [
      'an EDITOR made VIEWER (the organization moves list)',
      { visibility: { everything: false, anyStatusIn: ['a'], publishedIn: ['c', 'b'], now } },
    ],
    ['a super-admin', { visibility: { everything: true } }],
    ['another organization filter', { organizationSlug: 'globex' }],
    ['no organization filter', { organizationSlug: null }],
    ['other statuses', { statuses: ['DRAFT'] }],
    ['statuses in another order', { statuses: ['PUBLISHED', 'DRAFT'] }],
    ['no status filter', { statuses: null }],
    ['an empty status filter', { statuses: [] }],
    ['another page', { after: null }],
    ['another cursor', { after: { createdAt: '2026-11-01 10:00:00.123456+00', id: '5f0c1f9e-0000-4000-8000-000000000002' } }],
    ['another size', { limit: 11 }],
    ['without owners', { withOwners: false }],
  ])('not the same list: %s', (_, change) => {
    expect(sameList(page, { ...page, ...change })).toBe(false);
    expect(sameList({ ...page, ...change }, page)).toBe(false);
  });

  it('a guess is the last visibility remembered for its caller, and the oldest callers are forgotten first', () => {
    const guesses = new VisibilityGuesses();
    expect(guesses.get('u1')).toBeUndefined();
    guesses.remember('u1', page.visibility);
    expect(sameVisibility(guesses.get('u1')!, page.visibility)).toBe(true);
    expect(guesses.get('u1')).not.toHaveProperty('now');
    guesses.remember('u1', { everything: true });
    expect(guesses.get('u1')).toEqual({ everything: true });
    for (let index = 0; index < 10_000; index++) guesses.remember(`other-${index}`, { everything: true });
    expect(guesses.get('u1')).toBeUndefined();
    expect(guesses.get('other-9999')).toEqual({ everything: true });
  });
});
