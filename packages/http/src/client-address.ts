import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import parseForwarded from 'forwarded-parse';
import ipaddr from 'ipaddr.js';
import proxyAddr from 'proxy-addr';
import { requestMemo } from './request-memo.js';

/**
 * Who sent a request (TRUST_PROXY): the one place that reads forwarded headers. Every rate limit, log line and
 * security event takes its client address from `addressOf`, and the OpenID provider sees only what `forProvider`
 * leaves it.
 */
export interface ClientAddresses {
  /**
   * The client's address: the peer's, unless the peer is a trusted proxy; then the forwarded chain is walked from
   * the right and the first hop that is no trusted proxy is the client. Judged once per request.
   */
  addressOf(req: IncomingMessage): string;
  /**
   * Before a request reaches the provider (Koa, `proxy` on): every forwarded header is removed, and for a trusted
   * peer exactly one `X-Forwarded-For` (the client's address) and one `X-Forwarded-Proto` are set again.
   */
  forProvider(req: IncomingMessage): void;
}

/** TRUST_PROXY as proxy-addr entries, and which header carries the chain (TRUST_PROXY_HEADER). */
export interface TrustProxy {
  addresses: string[];
  header: 'x-forwarded' | 'forwarded';
}

type Scheme = 'http' | 'https';

/** What a trusted proxy told us about its client. */
interface Forwarding {
  address: string;
  protocol: Scheme;
}

const UNKNOWN = 'unknown';

/** The peer's address; `::ffff:a.b.c.d` (IPv4 on a dual-stack socket) counts as `a.b.c.d`. */
function peerAddress(req: IncomingMessage): string {
  const address = req.socket.remoteAddress;
  if (address === undefined) return UNKNOWN;
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/** This connection's own scheme (https only on the TLS listener). */
const ownScheme = (req: IncomingMessage): Scheme => ((req.socket as TLSSocket).encrypted ? 'https' : 'http');

/**
 * A forwarded address in one spelling (IPv4-mapped as IPv4, IPv6 compressed and lower case), so a client is one
 * rate-limit key however a proxy wrote it; undefined for anything that is no plain IP address (a port, `unknown`,
 * an obfuscated name, hex or octal IPv4 forms).
 */
function canonical(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const family = isIP(value);
  // node's isIP admits dotted quads without leading zeros only: already the one spelling.
  if (family === 4) return value;
  return family === 6 ? ipaddr.process(value).toString() : undefined;
}

function scheme(value: string | undefined): Scheme | undefined {
  const lower = value?.trim().toLowerCase();
  return lower === 'https' || lower === 'http' ? lower : undefined;
}

/** An RFC 7239 node (`192.0.2.1`, `192.0.2.1:8080`, `[2001:db8::1]:8080`, `unknown`, `_hidden`) without its port. */
function nodeAddress(node: string | undefined): string | undefined {
  if (!node) return undefined;
  if (node.startsWith('[')) {
    const end = node.indexOf(']');
    return end > 0 ? node.slice(1, end) : undefined;
  }
  const colon = node.indexOf(':');
  return colon > 0 && node.indexOf(':', colon + 1) < 0 ? node.slice(0, colon) : node;
}

function removeForwardedHeaders(req: IncomingMessage): void {
  const { headers } = req;
  for (const name in headers) {
    if (name === 'forwarded' || name.startsWith('x-forwarded-') || name === 'x-real-ip') delete headers[name];
  }
}

/** Nobody's forwarded headers are believed (TRUST_PROXY unset): the peer is the client. */
const untrusting: ClientAddresses = { addressOf: peerAddress, forProvider: removeForwardedHeaders };

export function createClientAddresses(trustProxy: TrustProxy | undefined): ClientAddresses {
  if (!trustProxy) return untrusting;
  const compiled = proxyAddr.compile(trustProxy.addresses);
  // Judging an address costs microseconds (ipaddr.js parses it), and the same few come back again and again (the
  // proxies, each client's own): verdicts are remembered in a bounded map.
  const verdicts = new Map<string, boolean>();
  const trust = (address: string): boolean => {
    let verdict = verdicts.get(address);
    if (verdict === undefined) {
      verdict = compiled(address, 0);
      if (verdicts.size >= 4096) verdicts.clear();
      verdicts.set(address, verdict);
    }
    return verdict;
  };

  /**
   * X-Forwarded-For, walked by proxy-addr (from the right, up to the first untrusted hop). If that hop is no IP
   * address, the trusted proxy that passed it on counts as the client. X-Forwarded-Proto: its last value, the one
   * the trusted peer added or set (values to its left may come from anyone); in a chain of proxies the one nearest
   * us must pass on the scheme the outermost saw (nginx: `proxy_set_header X-Forwarded-Proto $scheme` sets one value).
   */
  function fromXForwarded(req: IncomingMessage, peer: string): Forwarding {
    const hops = proxyAddr.all(req, trust);
    let address = peer;
    for (let i = hops.length - 1; i > 0; i--) {
      const hop = canonical(hops[i]);
      if (hop) {
        address = hop;
        break;
      }
    }
    const proto = req.headers['x-forwarded-proto'];
    const protocol = typeof proto === 'string' ? scheme(proto.slice(proto.lastIndexOf(',') + 1)) : undefined;
    return { address, protocol: protocol ?? ownScheme(req) };
  }

  /**
   * RFC 7239 Forwarded, walked from the right: each element was added by the proxy that received the connection
   * from its `for`, so while that proxy is trusted its element is believed, `proto` included. The client is the
   * first `for` that is no trusted proxy; a `for` that is no IP address (`unknown`, an obfuscated name) ends the
   * walk at the proxy before it. A header that does not parse names nobody: the peer is the client.
   */
  function fromForwarded(req: IncomingMessage, peer: string): Forwarding {
    let elements: Record<string, string>[] = [];
    const header = req.headers.forwarded;
    if (header) {
      try {
        elements = parseForwarded(header);
      } catch {
        elements = [];
      }
    }
    let address = peer;
    let protocol = ownScheme(req);
    for (let i = elements.length - 1; i >= 0; i--) {
      const element = elements[i]!;
      protocol = scheme(element['proto']) ?? protocol;
      const next = canonical(nodeAddress(element['for']));
      if (!next) break;
      address = next;
      if (!trust(next)) break;
    }
    return { address, protocol };
  }

  const judge = trustProxy.header === 'forwarded' ? fromForwarded : fromXForwarded;
  /** What a trusted proxy said, judged once per request; null when the peer is no trusted proxy (its headers count for nothing). */
  const judged = requestMemo<Forwarding>('what a trusted proxy said of the request');
  function forwardingOf(req: IncomingMessage): Forwarding | null {
    const peer = peerAddress(req);
    if (peer === UNKNOWN || !trust(peer)) return null;
    return judged.get(req) ?? judged.set(req, judge(req, peer));
  }

  return {
    addressOf: (req) => forwardingOf(req)?.address ?? peerAddress(req),
    forProvider(req) {
      const forwarding = forwardingOf(req);
      removeForwardedHeaders(req);
      if (forwarding) {
        req.headers['x-forwarded-for'] = forwarding.address;
        req.headers['x-forwarded-proto'] = forwarding.protocol;
      }
    },
  };
}
