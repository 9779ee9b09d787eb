import type { DocumentListQuery, DocumentVisibility } from '@latchkey/db';

/** A list's visibility with its instant left out: which organizations' documents, and in which states. */
export type VisibilityGuess = { everything: true } | { everything: false; anyStatusIn: readonly string[]; publishedIn: readonly string[] };

/** How many callers' guesses one process keeps: the oldest is dropped past this (a few hundred bytes each). */
const MAX_GUESSES = 10_000;

/**
 * The visibility each caller's last list was read with, by user id. Only a guess of which SQL to send with the
 * caller's own statement before the caller's attributes are read (`readCallerWithDocumentPage`): the rows it brings
 * are used only when the policy, deciding on the attributes that same statement read, asks for exactly that list.
 * A wrong or stale guess costs one more statement, never a row the caller may not see.
 */
export class VisibilityGuesses {
  private readonly byCaller = new Map<string, VisibilityGuess>();

  get(callerId: string): VisibilityGuess | undefined {
    return this.byCaller.get(callerId);
  }

  remember(callerId: string, visibility: DocumentVisibility): void {
    const known = this.byCaller.get(callerId);
    if (known && sameVisibility(known, visibility)) return;
    this.byCaller.delete(callerId);
    this.byCaller.set(
      callerId,
      visibility.everything
        ? { everything: true }
        : { everything: false, anyStatusIn: visibility.anyStatusIn, publishedIn: visibility.publishedIn },
    );
    if (this.byCaller.size > MAX_GUESSES) this.byCaller.delete(this.byCaller.keys().next().value!);
  }
}

/** The same organizations in any order (a caller's memberships come in no set order; each appears once). */
function sameOrganizations(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id) => b.includes(id));
}

/** Whether two visibilities select the same documents, their instants aside. */
export function sameVisibility(a: VisibilityGuess, b: VisibilityGuess): boolean {
  if (a.everything || b.everything) return a.everything === b.everything;
  return sameOrganizations(a.anyStatusIn, b.anyStatusIn) && sameOrganizations(a.publishedIn, b.publishedIn);
}

/** Whether rows read for `read` answer `asked`: the same list in every respect but its visibility's instant. */
export function sameList(read: DocumentListQuery, asked: DocumentListQuery): boolean {
  return (
    sameVisibility(read.visibility, asked.visibility) &&
    read.organizationSlug === asked.organizationSlug &&
    read.limit === asked.limit &&
    (read.withOwners === true) === (asked.withOwners === true) &&
    read.after?.createdAt === asked.after?.createdAt &&
    read.after?.id === asked.after?.id &&
    (read.statuses === null) === (asked.statuses === null) &&
    (read.statuses ?? []).length === (asked.statuses ?? []).length &&
    (read.statuses ?? []).every((status, index) => asked.statuses![index] === status)
  );
}
