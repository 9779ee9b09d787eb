import type { FactorSettings, SignInFactor, SignInPolicy } from '@latchkey/auth/configuration';
import { loadSignInPolicy, SignInPolicyError } from './sign-in-policy.js';
import { type Env, originSchema } from './env.js';
import { ConfigError } from './error.js';
import type { Config, ConfigSources } from './types.js';

/**
 * The sign-in policy: AUTH_POLICY_FILE's rules and acr levels, checked against the factors this server knows and
 * those the settings switch on (each factor's `offeredWhen`: passkeys with a relying party, client certificates
 * when the TLS listener maps them to accounts, an upstream provider when one is configured, passwords unless
 * PASSWORDS is off, the others always).
 */
export function signInPolicyConfig(
  file: string | undefined,
  readFile: ConfigSources['readFile'],
  factors: readonly SignInFactor[],
  settings: FactorSettings,
): SignInPolicy {
  let text: string | undefined;
  if (file) {
    if (!readFile) throw new ConfigError('AUTH_POLICY_FILE is set but files cannot be read here');
    try {
      text = readFile(file);
    } catch {
      throw new ConfigError(`AUTH_POLICY_FILE: cannot read ${file}`);
    }
  }
  try {
    const contributed = new Set(factors.filter((factor) => factor.offeredWhen(settings)).map((factor) => factor.authority));
    return loadSignInPolicy(text, { factors, contributed });
  } catch (error) {
    if (error instanceof SignInPolicyError) throw new ConfigError(`invalid configuration:\n  ${error.message}`);
    throw error;
  }
}

export function relyingPartyConfig(
  id: string | undefined,
  name: string,
  rawOrigins: string | undefined,
  publicUrl: string,
): Config['auth']['relyingParty'] {
  const rpId = (id ?? new URL(publicUrl).hostname).toLowerCase();
  const isIp = /^\d+\.\d+\.\d+\.\d+$/.test(rpId) || rpId.includes(':') || rpId.startsWith('[');
  // Derived from an IP-address PUBLIC_URL: passkeys are simply unavailable; named explicitly: a mistake.
  if (isIp && id === undefined) return undefined;
  if (isIp) {
    throw new ConfigError('invalid configuration:\n  RP_ID: an IP address is not a valid WebAuthn RP ID (use localhost or a domain name)');
  }
  const origins = new Set<string>();
  for (const item of (rawOrigins ?? new URL(publicUrl).origin)
    .split(',')
    .map((value) => value.trim())
    .filter(Boolean)) {
    const result = originSchema.safeParse(item);
    if (!result.success) throw new ConfigError(`invalid configuration:\n  WEBAUTHN_ORIGINS: ${result.error.issues[0]?.message}`);
    const host = new URL(result.data).hostname;
    if (host !== rpId && !host.endsWith(`.${rpId}`)) {
      throw new ConfigError(`invalid configuration:\n  WEBAUTHN_ORIGINS: ${result.data} is not on the RP ID ${rpId} or a subdomain of it`);
    }
    origins.add(result.data);
  }
  return { id: rpId, name, origins: [...origins] };
}

export function webhookConfig(url: string | undefined, secret: string | undefined): Config['auth']['webhook'] {
  if (!url && !secret) return undefined;
  if (!url || !secret) throw new ConfigError('invalid configuration:\n  DELIVERY_WEBHOOK_URL and DELIVERY_WEBHOOK_SECRET go together');
  return { url, secret };
}

/**
 * The upstream OpenID provider: UPSTREAM_ISSUER, UPSTREAM_CLIENT_ID and UPSTREAM_CLIENT_SECRET together (or none),
 * the issuer an https URL (plain http only on localhost or 127.0.0.1, for development) without query or fragment.
 */
export function upstreamConfig(e: Env): Config['auth']['upstream'] {
  const invalid = (line: string) => new ConfigError(`invalid configuration:\n  ${line}`);
  const { UPSTREAM_ISSUER: issuer, UPSTREAM_CLIENT_ID: clientId, UPSTREAM_CLIENT_SECRET: clientSecret, UPSTREAM_NAME: name } = e;
  if (!issuer && !clientId && !clientSecret) {
    if (name) throw invalid('UPSTREAM_NAME: only used with UPSTREAM_ISSUER, which is unset');
    return undefined;
  }
  if (!issuer || !clientId || !clientSecret)
    throw invalid(
      "UPSTREAM_ISSUER, UPSTREAM_CLIENT_ID and UPSTREAM_CLIENT_SECRET go together (the provider, and this server's client there)",
    );
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw invalid(`UPSTREAM_ISSUER: "${issuer}" is not a URL such as https://accounts.example.com`);
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw invalid('UPSTREAM_ISSUER: must be an https URL (plain http only on localhost or 127.0.0.1)');
  if (url.search || url.hash || url.username || url.password)
    throw invalid('UPSTREAM_ISSUER: must have no query, fragment or credentials (it is the issuer identifier)');
  return { issuer, clientId, clientSecret, name: name ?? url.hostname };
}
