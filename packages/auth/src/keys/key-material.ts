import { createPrivateKey, createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  calculateJwkThumbprint,
  CompactSign,
  compactVerify,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JSONWebKeySet,
  type JWK,
} from 'jose';
import { definedErrors } from '@latchkey/errors';

type KeyIndex = { index: number };

/**
 * Why signing or verification keys were refused at start-up. Messages name the setting and the key's place,
 * never key bytes.
 */
export const KEY_MATERIAL_ERRORS = {
  KEY_CURVE_UNSUPPORTED: ({ curve }: { curve: string | undefined }) => `unsupported EC curve ${curve ?? 'unknown'}`,
  KEY_ALG_NOT_CURVE: ({ alg, curve }: { alg: string; curve: string | undefined }) => `key alg ${alg} does not match curve ${curve}`,
  KEY_TYPE_UNSUPPORTED: ({ type }: { type: string | undefined }) =>
    `unsupported key type ${type ?? 'unknown'} (use RSA, EC P-256/384/521 or Ed25519)`,
  KEY_ALG_NOT_TYPE: ({ alg, type }: { alg: string; type: string | undefined }) => `key alg ${alg} does not fit a ${type} key`,
  SIGNING_KEY_NOT_JSON: 'signing key: not valid JSON',
  SIGNING_KEY_JWK_NOT_PRIVATE: 'signing key: a private JWK (with "d") is required',
  SIGNING_KEY_JWK_UNUSABLE: 'signing key: the JWK is not a usable private key',
  SIGNING_KEY_UNREADABLE: 'signing key: expected a private JWK (JSON) or a PKCS#8 PEM',
  SIGNING_KEY_NOT_PRIVATE: 'signing key: a private key is required',
  SIGNING_KEY_TOO_SHORT: ({ bits }: { bits: number }) => `signing key: RSA keys need at least 2048 bits (this one has ${bits})`,
  SIGNING_KEY_SELF_CHECK_FAILED: 'signing key: the key cannot produce signatures its own public key verifies',
  SIGNING_KEY_MISSING: 'SIGNING_KEY is required in production',
  /** the key generated under DATA_DIR was refused for `reason` (one of the messages above) */
  DEVELOPMENT_KEY_UNUSABLE: ({ reason, file }: { reason: string; file: string }) =>
    `${reason} (development key ${file}; delete it to generate a new one)`,
  VERIFY_KEYS_NOT_JSON: 'VERIFY_KEYS: not valid JSON (expected {"keys":[...]})',
  VERIFY_KEYS_NOT_JWKS: 'VERIFY_KEYS: expected a JWKS object {"keys":[...]}',
  VERIFY_KEY_PRIVATE: ({ index }: KeyIndex) => `VERIFY_KEYS: key ${index} holds private or symmetric material; give public keys only`,
  VERIFY_KEY_UNNAMED: ({ index }: KeyIndex) => `VERIFY_KEYS: key ${index} needs "kid" and "alg"`,
  /** the key's type or alg was refused for `reason` (one of the KEY_ messages above) */
  VERIFY_KEY_UNSUPPORTED: ({ index, reason }: KeyIndex & { reason: string }) => `VERIFY_KEYS: key ${index}: ${reason}`,
  VERIFY_KEY_UNUSABLE: ({ index }: KeyIndex) => `VERIFY_KEYS: key ${index} is not a usable public key`,
} as const;

export type KeyMaterialErrorCode = keyof typeof KEY_MATERIAL_ERRORS;

export class KeyMaterialError extends definedErrors('KeyMaterialError', KEY_MATERIAL_ERRORS) {}

export interface SigningKey {
  key: KeyObject;
  alg: string;
  kid: string;
}

export interface KeyMaterial {
  signing: SigningKey;
  /** public keys only: what /.well-known/jwks.json serves and what verification trusts */
  jwks: JSONWebKeySet;
  /** the alg allow-list for verification, derived from the keys (never from a token) */
  algorithms: string[];
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/** The algorithm a key is used with; asymmetric only, so a public key can never be used as an HMAC secret. */
function algorithmFor(key: KeyObject, declared: string | undefined): string {
  const type = key.asymmetricKeyType;
  const allowed: Record<string, string[]> = {
    rsa: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'],
    'rsa-pss': ['PS256', 'PS384', 'PS512'],
    ed25519: ['EdDSA', 'Ed25519'],
  };
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    const alg = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' }[curve ?? ''];
    if (!alg) throw new KeyMaterialError('KEY_CURVE_UNSUPPORTED', { curve });
    if (declared && declared !== alg) throw new KeyMaterialError('KEY_ALG_NOT_CURVE', { alg: declared, curve });
    return alg;
  }
  const options = type ? allowed[type] : undefined;
  if (!options) throw new KeyMaterialError('KEY_TYPE_UNSUPPORTED', { type });
  if (declared) {
    if (!options.includes(declared)) throw new KeyMaterialError('KEY_ALG_NOT_TYPE', { alg: declared, type });
    return declared;
  }
  return options[0]!;
}

async function publicJwkOf(key: KeyObject, alg: string, kid: string | undefined): Promise<JWK & { kid: string }> {
  const jwk = await exportJWK(createPublicKey(key));
  const id = kid ?? (await calculateJwkThumbprint(jwk));
  return { ...jwk, kid: id, alg, use: 'sig' };
}

/** Parses a private key given as JWK JSON or PKCS#8 PEM. Messages never include key bytes. */
export async function parseSigningKey(text: string): Promise<SigningKey & { publicJwk: JWK & { kid: string } }> {
  const trimmed = text.trim();
  let key: KeyObject;
  let declaredAlg: string | undefined;
  let declaredKid: string | undefined;
  if (trimmed.startsWith('{')) {
    let jwk: JWK;
    try {
      jwk = JSON.parse(trimmed) as JWK;
    } catch {
      throw new KeyMaterialError('SIGNING_KEY_NOT_JSON');
    }
    if (typeof jwk !== 'object' || jwk === null || !jwk.d) {
      throw new KeyMaterialError('SIGNING_KEY_JWK_NOT_PRIVATE');
    }
    try {
      key = createPrivateKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
    } catch {
      throw new KeyMaterialError('SIGNING_KEY_JWK_UNUSABLE');
    }
    declaredAlg = typeof jwk.alg === 'string' ? jwk.alg : undefined;
    declaredKid = typeof jwk.kid === 'string' ? jwk.kid : undefined;
  } else {
    try {
      key = createPrivateKey({ key: trimmed, format: 'pem' });
    } catch {
      throw new KeyMaterialError('SIGNING_KEY_UNREADABLE');
    }
  }
  if (key.type !== 'private') throw new KeyMaterialError('SIGNING_KEY_NOT_PRIVATE');
  const modulus = key.asymmetricKeyDetails?.modulusLength;
  if (modulus !== undefined && modulus < 2048) {
    throw new KeyMaterialError('SIGNING_KEY_TOO_SHORT', { bits: modulus });
  }
  const alg = algorithmFor(key, declaredAlg);
  const publicJwk = await publicJwkOf(key, alg, declaredKid);
  await assertSignsAndVerifies(key, alg, publicJwk);
  return { key, alg, kid: publicJwk.kid, publicJwk };
}

/**
 * A key whose public half does not match (a JWK with a foreign "n", say) would start fine and then
 * refuse every token it signed: sign and verify once at load instead.
 */
async function assertSignsAndVerifies(key: KeyObject, alg: string, publicJwk: JWK): Promise<void> {
  try {
    const jws = await new CompactSign(new TextEncoder().encode('latchkey key check')).setProtectedHeader({ alg }).sign(key);
    await compactVerify(jws, await importJWK(publicJwk, alg));
  } catch {
    throw new KeyMaterialError('SIGNING_KEY_SELF_CHECK_FAILED');
  }
}

/** Extra verification keys (for rotation): a public JWKS. Private members are refused so they are never published. */
export function parseVerifyKeys(text: string): JWK[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new KeyMaterialError('VERIFY_KEYS_NOT_JSON');
  }
  const keys = (parsed as JSONWebKeySet | null)?.keys;
  if (!Array.isArray(keys)) throw new KeyMaterialError('VERIFY_KEYS_NOT_JWKS');
  return keys.map((jwk, index) => {
    if (PRIVATE_MEMBERS.some((member) => member in jwk)) {
      throw new KeyMaterialError('VERIFY_KEY_PRIVATE', { index });
    }
    if (!jwk.kid || !jwk.alg) throw new KeyMaterialError('VERIFY_KEY_UNNAMED', { index });
    try {
      algorithmFor(createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' }), jwk.alg);
    } catch (error) {
      if (error instanceof KeyMaterialError) throw new KeyMaterialError('VERIFY_KEY_UNSUPPORTED', { index, reason: error.message });
      throw new KeyMaterialError('VERIFY_KEY_UNUSABLE', { index });
    }
    return { ...jwk, use: 'sig' };
  });
}

/** A new private JWK (RS256, 2048 bits): RS256 is the algorithm every OpenID relying party must support. */
export async function generateSigningJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint({ kty: jwk.kty!, n: jwk.n!, e: jwk.e! });
  return { ...jwk, kid, alg: 'RS256', use: 'sig' };
}

/**
 * Development only: the key generated once under DATA_DIR. It is written to a temporary file and then
 * hard-linked into place, which fails if the file exists: two processes starting at once agree on one
 * key (the loser reads the winner's), and a crash never leaves a half-written key file behind.
 */
async function developmentKey(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'keys', 'signing-key.json');
  try {
    return await readFile(file, 'utf8');
  } catch {
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const jwk = JSON.stringify(await generateSigningJwk(), null, 2);
    // A name of its own per call: two starts in one process and one millisecond must not share a temporary file.
    const temporary = `${file}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(temporary, jwk, { mode: 0o600 });
    try {
      await link(temporary, file);
      return jwk;
    } catch {
      return await readFile(file, 'utf8');
    } finally {
      await unlink(temporary).catch(() => {});
    }
  }
}

export interface KeyMaterialOptions {
  signingKey: string | undefined;
  verifyKeys: string | undefined;
  dataDir: string;
  production: boolean;
}

export async function loadKeyMaterial(options: KeyMaterialOptions): Promise<KeyMaterial> {
  if (!options.signingKey && options.production) {
    throw new KeyMaterialError('SIGNING_KEY_MISSING');
  }
  let signing: Awaited<ReturnType<typeof parseSigningKey>>;
  if (options.signingKey) {
    signing = await parseSigningKey(options.signingKey);
  } else {
    const file = path.join(options.dataDir, 'keys', 'signing-key.json');
    try {
      signing = await parseSigningKey(await developmentKey(options.dataDir));
    } catch (error) {
      if (error instanceof KeyMaterialError) throw new KeyMaterialError('DEVELOPMENT_KEY_UNUSABLE', { reason: error.message, file });
      throw error;
    }
  }
  const extra = options.verifyKeys ? parseVerifyKeys(options.verifyKeys) : [];
  const keys = [signing.publicJwk, ...extra.filter((jwk) => jwk.kid !== signing.kid)];
  const algorithms = [...new Set(keys.map((jwk) => jwk.alg!))];
  return { signing: { key: signing.key, alg: signing.alg, kid: signing.kid }, jwks: { keys }, algorithms };
}
