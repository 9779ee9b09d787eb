import { createPrivateKey, X509Certificate } from 'node:crypto';
import { normalizeFingerprint, parseDistinguishedName, subjectKey, type ClientCertificateUsers } from '@latchkey/auth/configuration';
import type { TrustProxy } from '@latchkey/http';
import ipaddr from 'ipaddr.js';
import proxyAddr from 'proxy-addr';
import { z } from 'zod';
import type { Env } from './env.js';
import { ConfigError } from './error.js';
import { readConfigFile } from './files.js';
import type { Config, ConfigSources } from './types.js';

/** The named ranges proxy-addr knows besides addresses and CIDRs. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * Whether a TRUST_PROXY entry believes everybody: `*`, a /0 (or netmask 0.0.0.0) of either family, or the whole
 * IPv4-mapped range (`::ffff:0:0/96`), which proxy-addr matches against every IPv4 peer.
 */
function trustsEveryone(entry: string): boolean {
  if (entry === '*') return true;
  const slash = entry.lastIndexOf('/');
  if (slash < 0) return false;
  const address = entry.slice(0, slash);
  const range = entry.slice(slash + 1);
  if (!ipaddr.isValid(address)) return false;
  const bits = /^\d+$/.test(range) ? Number(range) : ipaddr.IPv4.isValid(range) ? ipaddr.parse(range).prefixLengthFromSubnetMask() : null;
  if (bits === 0) return true;
  const ip = ipaddr.parse(address);
  return bits !== null && ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() && bits <= 96;
}

/**
 * TRUST_PROXY: comma-separated addresses and CIDRs of the reverse proxies in front (or `loopback`, `linklocal`,
 * `uniquelocal`); unset believes nobody's forwarded headers. An entry trusting every address stops start-up:
 * it would let any client choose the address its rate limits count against.
 */
export function trustProxyConfig(raw: string | undefined, header: TrustProxy['header'] | undefined): TrustProxy | undefined {
  const invalid = (line: string) => new ConfigError(`invalid configuration:\n  ${line}`);
  if (raw === undefined) {
    if (header !== undefined) throw invalid('TRUST_PROXY_HEADER: only used with TRUST_PROXY, which is unset');
    return undefined;
  }
  const addresses = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (addresses.length === 0) throw invalid('TRUST_PROXY: list the addresses or CIDRs of your reverse proxies (or loopback)');
  for (const entry of addresses) {
    if (trustsEveryone(entry)) {
      throw invalid(
        `TRUST_PROXY: "${entry}" would believe every client's forwarded headers; list only your reverse proxies' addresses or CIDRs`,
      );
    }
    if (PROXY_RANGE_NAMES.has(entry)) continue;
    try {
      proxyAddr.compile(entry);
    } catch {
      throw invalid(`TRUST_PROXY: "${entry}" is not an IP address, a CIDR such as 10.0.0.0/8, or one of loopback, linklocal, uniquelocal`);
    }
  }
  return { addresses, header: header ?? 'x-forwarded' };
}

const x509UsersFile = z
  .object({
    users: z
      .array(
        z
          .object({
            fingerprint256: z.string().optional(),
            subject: z.string().optional(),
            email: z
              .string()
              .trim()
              .toLowerCase()
              .regex(/^[^\s@]{1,64}@[^\s@]{1,190}$/, 'must be an e-mail address'),
          })
          .strict(),
      )
      .min(1),
  })
  .strict();

/** X509_USERS_FILE: `{ "users": [{ "fingerprint256": "AB:CD:..." | "subject": "CN=alice,O=Acme", "email": "..." }] }`. */
function parseClientCertificateUsers(text: string): ClientCertificateUsers {
  const fail = (lines: string[]) =>
    new ConfigError(`invalid configuration:\n${lines.map((line) => `  X509_USERS_FILE: ${line}`).join('\n')}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw fail(['not valid JSON']);
  }
  const parsed = x509UsersFile.safeParse(json);
  if (!parsed.success) throw fail(parsed.error.issues.map((issue) => `${issue.path.join('.') || '(file)'}: ${issue.message}`));
  const byFingerprint = new Map<string, string>();
  const bySubject = new Map<string, string>();
  for (const [index, entry] of parsed.data.users.entries()) {
    const at = `users.${index}`;
    if ((entry.fingerprint256 === undefined) === (entry.subject === undefined))
      throw fail([`${at}: give either fingerprint256 or subject`]);
    if (entry.fingerprint256 !== undefined) {
      const fingerprint = normalizeFingerprint(entry.fingerprint256);
      if (!fingerprint) throw fail([`${at}.fingerprint256: must be a SHA-256 fingerprint (64 hex digits, colons optional)`]);
      if (byFingerprint.has(fingerprint)) throw fail([`${at}.fingerprint256: this certificate is listed twice`]);
      byFingerprint.set(fingerprint, entry.email);
    } else {
      const pairs = parseDistinguishedName(entry.subject!);
      if (!pairs) throw fail([`${at}.subject: must be a distinguished name such as CN=alice,O=Acme`]);
      const key = subjectKey(pairs);
      if (bySubject.has(key)) throw fail([`${at}.subject: this subject is listed twice`]);
      bySubject.set(key, entry.email);
    }
  }
  return { byFingerprint, bySubject };
}

/**
 * The HTTPS listener (TLS_PORT with TLS_CERT_FILE and TLS_KEY_FILE) and its client certificates
 * (TLS_CLIENT_CA_FILE with X509_USERS_FILE). Files are checked here, so a bad one stops start-up clearly.
 */
export function tlsConfig(
  e: Env,
  readFile: ConfigSources['readFile'],
): { tls: Config['http']['tls']; clientCertificates: ClientCertificateUsers | undefined } {
  const invalid = (line: string) => new ConfigError(`invalid configuration:\n  ${line}`);
  if (e.TLS_PORT === undefined) {
    const stray = (['TLS_CERT_FILE', 'TLS_KEY_FILE', 'TLS_CLIENT_CA_FILE', 'X509_USERS_FILE'] as const).filter(
      (name) => e[name] !== undefined,
    );
    if (stray.length > 0) throw invalid(`${stray.join(', ')}: only used with TLS_PORT (the HTTPS listener), which is unset`);
    return { tls: undefined, clientCertificates: undefined };
  }
  if (!e.TLS_CERT_FILE || !e.TLS_KEY_FILE)
    throw invalid("TLS_PORT: needs TLS_CERT_FILE and TLS_KEY_FILE (the listener's certificate chain and private key, PEM)");
  if (e.TLS_PORT !== 0 && e.TLS_PORT === e.PORT) throw invalid('TLS_PORT: must differ from PORT');
  if ((e.TLS_CLIENT_CA_FILE === undefined) !== (e.X509_USERS_FILE === undefined)) {
    throw invalid('TLS_CLIENT_CA_FILE and X509_USERS_FILE go together (whose client certificates are accepted, and whom they sign in)');
  }
  const cert = readConfigFile('TLS_CERT_FILE', e.TLS_CERT_FILE, readFile);
  const key = readConfigFile('TLS_KEY_FILE', e.TLS_KEY_FILE, readFile);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    throw invalid(`TLS_CERT_FILE: ${e.TLS_CERT_FILE} holds no PEM certificate`);
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw invalid(`TLS_KEY_FILE: ${e.TLS_KEY_FILE} holds no unencrypted PEM private key`);
  }
  if (!certificate.checkPrivateKey(privateKey)) throw invalid('TLS_KEY_FILE: the key does not belong to the certificate in TLS_CERT_FILE');
  let clientCa: string | undefined;
  let clientCertificates: ClientCertificateUsers | undefined;
  if (e.TLS_CLIENT_CA_FILE && e.X509_USERS_FILE) {
    clientCa = readConfigFile('TLS_CLIENT_CA_FILE', e.TLS_CLIENT_CA_FILE, readFile);
    const blocks = clientCa.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    if (blocks.length === 0) throw invalid(`TLS_CLIENT_CA_FILE: ${e.TLS_CLIENT_CA_FILE} holds no PEM certificate`);
    for (const [index, block] of blocks.entries()) {
      try {
        new X509Certificate(block);
      } catch {
        throw invalid(`TLS_CLIENT_CA_FILE: certificate ${index + 1} of ${e.TLS_CLIENT_CA_FILE} cannot be parsed`);
      }
    }
    clientCertificates = parseClientCertificateUsers(readConfigFile('X509_USERS_FILE', e.X509_USERS_FILE, readFile));
  }
  return { tls: { port: e.TLS_PORT, cert, key, clientCa }, clientCertificates };
}
