import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { normalizeUsername } from '../one-time-token/username.js';

/**
 * Counter key for a username: normalised (trim + lower-case, as one-time tokens compare it), then hashed.
 * Hashing keeps e-mail addresses and phone numbers out of Redis and the rate_limits table, and bounds the key
 * length (the PostgreSQL limiter keys are varchar(255)).
 */
export function usernameKey(username: string): string {
  return `u:${sha256(normalizeUsername(username))}`;
}

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/;
const PRINTABLE = /^[\x21-\x7e]*$/;

/**
 * Counter key for a client address (the endpoint decides which address is the client's, e.g. behind trusted
 * proxies). One source, one key:
 * - an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) counts as its IPv4 address;
 * - an IPv6 address counts as its /64: one subscriber usually holds a whole /64, so counting single addresses
 *   would give an attacker 2^64 fresh budgets;
 * - anything else is kept if short and printable, otherwise hashed (bounded key length).
 */
export function sourceKey(ip: string): string {
  let value = ip.trim().toLowerCase();
  if (value.startsWith('[') && value.endsWith(']')) value = value.slice(1, -1);
  const zone = value.indexOf('%');
  if (zone >= 0) value = value.slice(0, zone);
  const mapped = MAPPED_IPV4.exec(value);
  if (mapped?.[1] && isIPv4(mapped[1])) return `ip:${mapped[1]}`;
  if (isIPv4(value)) return `ip:${value}`;
  if (isIPv6(value)) return `ip:${ipv6Prefix64(value)}::/64`;
  return value.length <= 64 && PRINTABLE.test(value) ? `src:${value}` : `src:${sha256(value)}`;
}

/** The first four groups of a valid IPv6 address, without leading zeros. An embedded dotted quad is the last 32 bits. */
function ipv6Prefix64(address: string): string {
  const [head = '', tail] = address.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  let groups = headGroups;
  if (tail !== undefined) {
    const tailGroups = tail === '' ? [] : tail.split(':');
    const tailWidth = tailGroups.reduce((width, group) => width + (group.includes('.') ? 2 : 1), 0);
    groups = [...headGroups, ...new Array<string>(8 - headGroups.length - tailWidth).fill('0'), ...tailGroups];
  }
  return groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':');
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}
