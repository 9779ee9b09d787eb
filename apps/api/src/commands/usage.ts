import { CodedError } from '@latchkey/errors';
import { closest, distance } from 'fastest-levenshtein';

/** What `pnpm latchkey` offers (printed by `help`; `help <command>` prints the command's own entries). */
export const USAGE = `usage: pnpm latchkey <command> [options]

commands:
  migrate                      apply database migrations (idempotent)
  seed [--bench]               apply migrations, then add the demo data (idempotent); --bench also adds the
                               benchmark data set (50 organizations, 2,000 users, 100,000 documents) and prints
                               one JSON line of the rows added; refused under NODE_ENV=production
  token --sub SUBJECT | --email EMAIL
        [--amr otp,swk] [--acr VALUE] [--scope "openid profile"] [--ttl 10m]
                               mint an access token with the configured key; prints only the token. It carries
                               every API scope unless --scope names API scopes (documents:read, ...); OpenID scopes
                               there add to the token and restrict nothing
  keygen                       print a new private signing key (JWK) for SIGNING_KEY
  outbox [--limit 10]          print the latest messages of the development outbox (DATA_DIR/outbox)
  documents --as EMAIL [--organization SLUG] [--status DRAFT,PUBLISHED] [--first 20] [--after CURSOR]
                               list the documents EMAIL may see (one JSON object per line, then the page info)
  delete-document ID --as EMAIL
                               delete a document as EMAIL would (same rules as the API; legal hold binds everyone)
                               exit 3 when the rules refuse, 4 when the document is missing or hidden
  persisted import FILE [--app NAME --version VERSION]
                               import a persisted-documents manifest (the client preset's, or Apollo's) as that app
                               version's trusted documents (the allowlist); every id must be its document's SHA-256
                               and every document must validate against this schema, or nothing is imported (exit 2);
                               an app version already imported with other documents, or retired: exit 3, nothing
                               imported; without --app the documents join the app "unnamed"
  persisted apps               every app version, one JSON object per line: status, document count, import time and
                               last use of its documents
  persisted retire --app NAME --version VERSION
                               take that version's documents off the allowlist (but those another active version
                               holds); running servers refuse them within 10 seconds; unknown app version: exit 4
  persisted count              how many persisted operations the database holds (APQ registrations, allowlist)
  schema check [--base REF | --base-file FILE] [--window 30d] [--fail-on-dangerous] [--json]
                               compare schema/ with a base (default: HEAD while schema/ has uncommitted changes, else
                               HEAD^) against the operations clients are known to send: this repository's, every active
                               app version's, the APQ registrations used within the window, recorded uses of deprecated
                               fields (the database's, with DATABASE_URL or a free embedded database); exit 1 when a
                               change breaks one (or, with --fail-on-dangerous, a dangerous change reaches one), 2 for
                               bad input (an unknown revision, SDL that does not parse); runs without building
  schema usage [--window 30d] [--json]
                               each deprecated field, argument, input field or enum value, with the documents, apps and
                               clients that used it and when; what nobody used within the window is safe to remove
  budget show --email EMAIL    the account's plan, bucket size and what its shared bucket holds now, as one JSON
                               object (buckets in Redis or PostgreSQL; on the embedded database they are the
                               running server's memory: exit 1 says so); unknown e-mail: exit 4
  budget reset --email EMAIL   fill the account's shared bucket again
  plan --organization SLUG FREE|PRO
                               set the organization's plan, which sizes its members' budgets (running servers
                               apply it within seconds, to tokens already issued too); says "SLUG: FREE -> PRO",
                               or that it already was; unknown organization: exit 4
  sessions list --email EMAIL  the user's signed-in sessions, one JSON object per line
  sessions end --email EMAIL [--id ID]
                               end one session or all of them (their tokens are refused within seconds; clients
                               with a back-channel logout URI are told); prints {"ended":N}; unknown e-mail or id: exit 4
  login --url URL [--client ID] [--scope "openid documents:read"]
                               sign this machine in to the server at URL as a person, with the device grant: prints
                               a code and the page to enter it at (in any browser), waits for the sign-in, and stores
                               the token in $XDG_CONFIG_HOME/latchkey/credentials.json (~/.config by default, mode
                               0600); the client is latchkey-cli unless --client names another; every API scope
                               unless --scope names fewer
  whoami --url URL             the account signed in to the server at URL and the token's scopes, as the API answers
                               (GraphQL viewer); a token past its expiry is refreshed first
  logout --url URL             revoke this machine's sign-in to the server at URL and forget its token
  audit verify [--checkpoint FILE]
                               verify the audit trail's chain (from its retention anchor); with FILE (a checkpoint
                               JWS as printed), also that the chain still reaches it; exit 1 names the first edited,
                               deleted or inserted row, or a tail cut off after the checkpoint
  audit export --since <ISO time | 24h>
                               the audit events since then, one JSON object per line; the head's signed checkpoint
                               on stderr
`;

/** Bad input on the command line (code USAGE_INVALID): exit 2 with the message (and where to read more). */
export class UsageError extends CodedError<'USAGE_INVALID'> {
  constructor(message: string) {
    super('UsageError', 'USAGE_INVALID', message);
  }
}

/** `--email EMAIL`, which `command` requires: trimmed and lower-cased, checked before anything is opened. */
export function requiredEmail(email: string | undefined, command: string): string {
  if (!email?.trim()) throw new UsageError(`${command}: --email EMAIL is required`);
  return email.trim().toLowerCase();
}

/** Each command's entries of USAGE, by command name (the first word: `persisted import` and `persisted count` are one). */
const ENTRIES = new Map<string, string[]>();
{
  let current: string[] | undefined;
  for (const line of USAGE.slice(USAGE.indexOf('commands:\n') + 'commands:\n'.length).split('\n')) {
    const name = /^ {2}([a-z][a-z-]*)/.exec(line)?.[1];
    if (name) {
      current = ENTRIES.get(name) ?? [];
      ENTRIES.set(name, current);
    }
    if (line.trim() !== '') current?.push(line);
  }
}

/** The commands, as USAGE lists them. */
export const COMMANDS: readonly string[] = [...ENTRIES.keys()];

/** `pnpm latchkey help <command>`: that command's entries, or undefined for a command there is not. */
export function helpFor(command: string): string | undefined {
  const entries = ENTRIES.get(command);
  return entries && `usage: pnpm latchkey ${command} [options]\n\n${entries.join('\n')}\n`;
}

/** The options a command's entries name (`--as`, `--first`, ...). */
export function optionsOf(command: string): string[] {
  return [...new Set((ENTRIES.get(command) ?? []).join(' ').match(/--[a-z][a-z-]*/g) ?? [])];
}

/** The candidate a mistyped word is close to (two edits, or a third of a long word), if one is. */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  if (candidates.length === 0) return undefined;
  const best = closest(word, [...candidates]);
  return distance(word, best) <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}
