/** E-mail usernames compare lower-cased and trimmed. */
export function normalizeUsername(username: string): string {
  return username.trim().toLowerCase();
}
