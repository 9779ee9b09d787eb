/** What a PendingList holds: an entry knows its own place in the list (-1 when not in it). */
export interface Listed {
  slot: number;
}

/**
 * The statements waiting for an answer, with `Set`'s add, delete, size and iteration, all O(1) but iteration,
 * and without a hash table.
 *
 * Why not a `Set`: under load the set of pending statements grows and shrinks all the time, and V8 rehashes a Set's
 * table as it does. A table it replaces keeps its entries and a link to the table that replaced it (for iterators
 * still walking it). Once such a table reaches the old generation it is dead, but the young-generation collector
 * cannot know that and keeps whatever it points to: the next table, that table's entries (each a statement with its
 * rows, its request's view of the database), and so on down the chain, which then moves to the old generation in
 * turn, until a full collection breaks it. Measured on a page of documents over PostgreSQL: 2.1-2.3 MB promoted at
 * each young collection with a Set, 0.3-0.5 MB with this list (docs/performance.md, "The kept levers").
 *
 * An entry is removed by moving the last entry into its place, so the array never holds a finished statement.
 */
export class PendingList<Entry extends Listed> implements Iterable<Entry> {
  readonly #entries: Entry[] = [];

  get size(): number {
    return this.#entries.length;
  }

  add(entry: Entry): void {
    if (entry.slot >= 0 && this.#entries[entry.slot] === entry) return;
    entry.slot = this.#entries.length;
    this.#entries.push(entry);
  }

  /** true if the entry was in the list (like `Set.prototype.delete`) */
  delete(entry: Entry): boolean {
    const slot = entry.slot;
    if (slot < 0 || this.#entries[slot] !== entry) return false;
    const last = this.#entries.pop()!;
    if (last !== entry) {
      this.#entries[slot] = last;
      last.slot = slot;
    }
    entry.slot = -1;
    return true;
  }

  /** A copy: entries may be deleted while it is walked. */
  [Symbol.iterator](): Iterator<Entry> {
    return [...this.#entries][Symbol.iterator]();
  }
}
