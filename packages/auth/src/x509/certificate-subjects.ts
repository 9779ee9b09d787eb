// Certificate subjects as configuration names them (X509_USERS_FILE): pure functions, no I/O, so configuration
// can check them without loading the sign-in machinery.

/**
 * Who a client certificate signs in (X509_USERS_FILE, checked by loadConfig): by the certificate's SHA-256
 * fingerprint (one certificate exactly), else by its subject distinguished name (any certificate with that
 * subject from an authority in TLS_CLIENT_CA_FILE). Values are e-mail addresses of accounts.
 */
export interface ClientCertificateUsers {
  /** upper-case hex pairs joined by colons, as node's `fingerprint256` */
  byFingerprint: ReadonlyMap<string, string>;
  /** `subjectKey` of the subject */
  bySubject: ReadonlyMap<string, string>;
}

/** A SHA-256 fingerprint in node's form (`AB:CD:...`), from hex with or without colons; undefined if not one. */
export function normalizeFingerprint(value: string): string | undefined {
  const hex = value.trim().replace(/:/g, '').toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) return undefined;
  return hex.match(/../g)!.join(':');
}

/**
 * The attributes of a distinguished name written as `CN=alice,O=Acme` (RFC 4514 order or any other; `\,` and
 * `\+` escape separators); undefined when it is not one. Attribute types are OpenSSL's short names (CN, O, OU,
 * C, ST, L, DC, emailAddress, ...) or dotted OIDs.
 */
export function parseDistinguishedName(text: string): [string, string][] | undefined {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '\\' && i + 1 < text.length) {
      current += text[++i];
    } else if (char === ',' || char === '+') {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current);
  const pairs: [string, string][] = [];
  for (const part of parts) {
    // Split on the first `=` of the raw part: escaped characters were already taken literally above, so an
    // attribute type never contains one.
    const index = part.indexOf('=');
    if (index <= 0) return undefined;
    const type = part.slice(0, index).trim();
    const value = part.slice(index + 1).trim();
    if (!/^([A-Za-z][A-Za-z0-9-]*|[0-9]+(\.[0-9]+)+)$/.test(type) || value === '') return undefined;
    pairs.push([type, value]);
  }
  return pairs;
}

/**
 * A distinguished name in one comparable form: attribute types upper-case, values compared without regard to
 * case or repeated spaces (X.520 caseIgnoreMatch), the order of the attributes ignored.
 */
export function subjectKey(pairs: readonly (readonly [string, string])[]): string {
  return pairs
    .map(([type, value]) => `${type.toUpperCase()}=${value.trim().replace(/\s+/g, ' ').toLowerCase()}`)
    .sort()
    .join('\n');
}
