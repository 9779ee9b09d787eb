/** drizzle's `execute` answers an array (postgres-js) or `{ rows }` (PGlite): the rows either way. */
export function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}
