import { revokedAppKey } from '@latchkey/db';

/**
 * The apps users revoked (Connected apps), read from the ended-sessions table with the ended sessions: revoked-app
 * key -> [ms of the revocation, ms until which the entry counts]. A token issued to that client for that user at or
 * before the revocation's second is refused. Entries added here stay until a read sees them in the table.
 */
export function createRevokedApps(now: () => number) {
  let revoked = new Map<string, [number, number]>();
  const locallyAdded = new Map<string, [number, number]>();
  return {
    /** Replaces the list with a read's entries (and what this instance added since). */
    replace(read: Map<string, [number, number]>): void {
      for (const [key, entry] of locallyAdded) {
        const seen = read.get(key);
        if ((seen && seen[0] >= entry[0]) || entry[1] <= now()) locallyAdded.delete(key);
        else read.set(key, entry);
      }
      revoked = read;
    },
    isRevoked(clientId: string, userId: string, issuedAt: number | null): boolean {
      if (revoked.size === 0) return false;
      const entry = revoked.get(revokedAppKey(userId, clientId));
      if (entry === undefined || entry[1] <= now()) return false;
      return issuedAt === null || issuedAt <= Math.floor(entry[0] / 1000);
    },
    add(userId: string, clientId: string, revokedAt: Date, until: Date): void {
      const key = revokedAppKey(userId, clientId);
      const entry: [number, number] = [revokedAt.getTime(), until.getTime()];
      revoked.set(key, entry);
      locallyAdded.set(key, entry);
    },
  };
}
