// The one "database of its own" helper lives in @latchkey/db/testing.
export { openOwnDatabase } from '@latchkey/db/testing';
