import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { calculateJwkThumbprint, exportJWK, type JWK } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { generateSigningJwk, KeyMaterialError, loadKeyMaterial, parseSigningKey, parseVerifyKeys } from './key-material.js';

// Unit tests of key handling (spec Authentication 1 and 4: tokens are verified with keys that come from
// configuration; only asymmetric keys, so a public key can never double as an HMAC secret).

type KeyType = 'rsa' | 'ec' | 'ed25519';

const pairs = new Map<KeyType, { privateKey: KeyObject; publicKey: KeyObject }>();
/** One key pair per type for the whole file (RSA generation is slow); no test needs two of a kind. */
function keyPair(type: KeyType): { privateKey: KeyObject; publicKey: KeyObject } {
  let pair = pairs.get(type);
  if (!pair) {
    if (type === 'rsa') pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    else if (type === 'ec') pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    else pair = generateKeyPairSync('ed25519');
    pairs.set(type, pair);
  }
  return pair;
}

const pkcs8Pem = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }).toString();
const privateJwkOf = (key: KeyObject) => key.export({ format: 'jwk' }) as JWK;
const publicJwkOf = (key: KeyObject) => key.export({ format: 'jwk' }) as JWK;

/** Runs `attempt`, expects a KeyMaterialError, and checks its message leaks none of `secrets`. */
async function expectRefusal(attempt: () => unknown, secrets: (string | undefined)[] = []): Promise<KeyMaterialError> {
  let caught: unknown;
  try {
    await attempt();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(KeyMaterialError);
  const message = (caught as Error).message;
  for (const secret of secrets.filter((s): s is string => Boolean(s))) {
    // any 16-character run of the secret would be a leak
    for (let i = 0; i + 16 <= secret.length; i += 8) expect(message).not.toContain(secret.slice(i, i + 16));
  }
  return caught as KeyMaterialError;
}

/** The base64 body of a PEM, i.e. the key bytes. */
const pemBody = (pem: string) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');

describe('parseSigningKey accepts private keys from configuration', () => {
  it('a private RSA JWK: alg RS256, its own kid kept', async () => {
    const jwk = await generateSigningJwk();
    const parsed = await parseSigningKey(JSON.stringify(jwk));
    expect(parsed.alg).toBe('RS256');
    expect(parsed.kid).toBe(jwk.kid);
    expect(parsed.key.type).toBe('private');
    expect(parsed.publicJwk).toMatchObject({ kty: 'RSA', n: jwk.n, e: jwk.e, kid: jwk.kid, alg: 'RS256', use: 'sig' });
  });

  it('a private RSA JWK without kid or alg: RS256 and the RFC 7638 thumbprint as kid', async () => {
    const { privateKey, publicKey } = keyPair('rsa');
    const parsed = await parseSigningKey(JSON.stringify(privateJwkOf(privateKey)));
    expect(parsed.alg).toBe('RS256');
    expect(parsed.kid).toBe(await calculateJwkThumbprint(publicJwkOf(publicKey)));
  });

  it('a private RSA JWK declaring PS256 keeps PS256', async () => {
    const { privateKey } = keyPair('rsa');
    expect((await parseSigningKey(JSON.stringify({ ...privateJwkOf(privateKey), alg: 'PS256' }))).alg).toBe('PS256');
  });

  it.each([
    ['rsa', 'RS256', 'RSA'],
    ['ec', 'ES256', 'EC'],
    ['ed25519', 'EdDSA', 'OKP'],
  ] as const)('a PKCS#8 PEM (%s): alg %s, thumbprint kid', async (type, alg, kty) => {
    const { privateKey, publicKey } = keyPair(type);
    const parsed = await parseSigningKey(`\n${pkcs8Pem(privateKey)}\n`);
    expect(parsed.alg).toBe(alg);
    expect(parsed.kid).toBe(await calculateJwkThumbprint(publicJwkOf(publicKey)));
    expect(parsed.publicJwk.kty).toBe(kty);
  });

  it('the published JWK holds public members only', async () => {
    for (const type of ['rsa', 'ec', 'ed25519'] as const) {
      const { publicJwk } = await parseSigningKey(pkcs8Pem(keyPair(type).privateKey));
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect(publicJwk).not.toHaveProperty(member);
    }
  });
});

describe('parseSigningKey refuses what is not a private asymmetric key, without echoing it', () => {
  it('a public JWK', async () => {
    const { publicKey } = keyPair('rsa');
    const jwk = publicJwkOf(publicKey);
    const error = await expectRefusal(() => parseSigningKey(JSON.stringify(jwk)), [jwk.n]);
    expect(error.message).toMatch(/private/);
  });

  it('a public (SPKI) PEM', async () => {
    const pem = keyPair('ec').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    await expectRefusal(() => parseSigningKey(pem), [pemBody(pem)]);
  });

  it('garbage text, broken JSON and a truncated PEM', async () => {
    const pem = pkcs8Pem(keyPair('rsa').privateKey);
    const truncated = pem.slice(0, pem.length / 2);
    for (const text of ['not a key', '', '{"kty":"RSA","d":', truncated]) {
      await expectRefusal(() => parseSigningKey(text), [pemBody(truncated)]);
    }
  });

  it('a symmetric (oct) key, with or without "d"', async () => {
    const k = 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA';
    await expectRefusal(() => parseSigningKey(JSON.stringify({ kty: 'oct', k, alg: 'HS256' })), [k]);
    await expectRefusal(() => parseSigningKey(JSON.stringify({ kty: 'oct', k, d: k, alg: 'HS256' })), [k]);
  });

  it('a private JWK that is not a usable key (RSA without CRT members, EC point off the curve, wrong kty)', async () => {
    const rsa = privateJwkOf(keyPair('rsa').privateKey);
    const ec = privateJwkOf(keyPair('ec').privateKey);
    for (const candidate of [
      { kty: 'RSA', n: rsa.n, e: rsa.e, d: rsa.d },
      { ...ec, x: ec.y },
      { ...ec, kty: 'RSA' },
    ]) {
      await expectRefusal(() => parseSigningKey(JSON.stringify(candidate)), [rsa.d, rsa.n, ec.d]);
    }
  });

  it.each([
    ['ES256 on an RSA key', 'rsa', 'ES256'],
    ['HS256 on an RSA key', 'rsa', 'HS256'],
    ['none on an RSA key', 'rsa', 'none'],
    ['RS256 on an EC P-256 key', 'ec', 'RS256'],
    ['ES384 on an EC P-256 key', 'ec', 'ES384'],
    ['ES256 on an Ed25519 key', 'ed25519', 'ES256'],
  ] as const)('a JWK whose alg does not fit the key: %s', async (_title, type, alg) => {
    const jwk = privateJwkOf(keyPair(type).privateKey);
    const error = await expectRefusal(() => parseSigningKey(JSON.stringify({ ...jwk, alg })), [jwk.d, jwk.n, jwk.x]);
    expect(error.message).toContain(alg);
  });
});

describe('parseVerifyKeys (extra public keys for rotation)', () => {
  async function publicEntry(type: KeyType, alg: string): Promise<JWK> {
    const jwk = publicJwkOf(keyPair(type).publicKey);
    return { ...jwk, alg, kid: await calculateJwkThumbprint(jwk) };
  }

  it('accepts a public JWKS and marks every key for signatures', async () => {
    const keys = [await publicEntry('rsa', 'RS256'), await publicEntry('ec', 'ES256'), await publicEntry('ed25519', 'EdDSA')];
    const parsed = parseVerifyKeys(JSON.stringify({ keys }));
    expect(parsed).toEqual(keys.map((key) => ({ ...key, use: 'sig' })));
  });

  it('refuses a key holding private members, without echoing them', async () => {
    const jwk = privateJwkOf(keyPair('rsa').privateKey);
    const entry = { ...jwk, alg: 'RS256', kid: 'rotating' };
    const error = await expectRefusal(() => parseVerifyKeys(JSON.stringify({ keys: [entry] })), [jwk.d, jwk.p, jwk.q, jwk.dp]);
    expect(error.message).toMatch(/private/);
  });

  it.each(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth'])('refuses a key with the private member "%s" alone', async (member) => {
    const entry = { ...(await publicEntry('rsa', 'RS256')), [member]: 'AQAB' };
    await expectRefusal(() => parseVerifyKeys(JSON.stringify({ keys: [entry] })));
  });

  it('refuses a symmetric (oct) key', async () => {
    const k = 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA';
    await expectRefusal(() => parseVerifyKeys(JSON.stringify({ keys: [{ kty: 'oct', k, alg: 'HS256', kid: 'h' }] })), [k]);
  });

  it('refuses keys without kid or alg, with a mismatched alg, and text that is not a JWKS', async () => {
    const entry = await publicEntry('rsa', 'RS256');
    const { kid: _kid, ...noKid } = entry;
    const { alg: _alg, ...noAlg } = entry;
    for (const text of [
      JSON.stringify({ keys: [noKid] }),
      JSON.stringify({ keys: [noAlg] }),
      JSON.stringify({ keys: [{ ...entry, alg: 'ES256' }] }),
      JSON.stringify({ keys: [{ ...entry, alg: 'HS256' }] }),
      JSON.stringify([entry]),
      'null',
      'not json',
    ]) {
      await expectRefusal(() => parseVerifyKeys(text), [entry.n]);
    }
  });
});

describe('loadKeyMaterial', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'latchkey-keys-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const development = (dataDir: string) => loadKeyMaterial({ signingKey: undefined, verifyKeys: undefined, dataDir, production: false });

  it('rule 4: production without a configured key throws, naming SIGNING_KEY, and writes nothing', async () => {
    const dataDir = tempDir();
    const error = await expectRefusal(() => loadKeyMaterial({ signingKey: undefined, verifyKeys: undefined, dataDir, production: true }));
    expect(error.message).toContain('SIGNING_KEY');
    expect(() => statSync(path.join(dataDir, 'keys'))).toThrow();
  });

  it('development: a key is generated once under DATA_DIR, private to the owner, and reused', async () => {
    const dataDir = tempDir();
    const first = await development(dataDir);
    const file = path.join(dataDir, 'keys', 'signing-key.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ kty: 'RSA', kid: first.signing.kid, alg: 'RS256' });
    const second = await development(dataDir);
    expect(second.signing.kid).toBe(first.signing.kid);
    expect(second.jwks).toEqual(first.jwks);
  });

  it('development: two concurrent first starts on an empty DATA_DIR agree on one kid', async () => {
    const dataDir = tempDir();
    const [a, b] = await Promise.all([development(dataDir), development(dataDir)]);
    expect(a.signing.kid).toBe(b.signing.kid);
    const stored = JSON.parse(readFileSync(path.join(dataDir, 'keys', 'signing-key.json'), 'utf8')) as JWK;
    expect(stored.kid).toBe(a.signing.kid);
  });

  it('a configured key is used as given, and nothing is written to DATA_DIR', async () => {
    const dataDir = tempDir();
    const jwk = await generateSigningJwk();
    const material = await loadKeyMaterial({ signingKey: JSON.stringify(jwk), verifyKeys: undefined, dataDir, production: true });
    expect(material.signing).toMatchObject({ kid: jwk.kid, alg: 'RS256' });
    expect(() => statSync(path.join(dataDir, 'keys'))).toThrow();
  });

  it('the JWKS publishes public keys only; the alg allow-list comes from the keys', async () => {
    const signing = await generateSigningJwk();
    const ec = publicJwkOf(keyPair('ec').publicKey);
    const rotated = { ...ec, kid: 'previous', alg: 'ES256' };
    const material = await loadKeyMaterial({
      signingKey: JSON.stringify(signing),
      verifyKeys: JSON.stringify({ keys: [rotated, { ...(await exportJWK(keyPair('rsa').publicKey)), kid: signing.kid, alg: 'RS256' }] }),
      dataDir: tempDir(),
      production: true,
    });
    expect(material.jwks.keys.map((key) => key.kid)).toEqual([signing.kid, 'previous']);
    expect(material.jwks.keys[0]!.n).toBe(signing.n); // the signing key wins over a VERIFY_KEYS entry with its kid
    for (const key of material.jwks.keys) expect(key).not.toHaveProperty('d');
    expect(material.algorithms).toEqual(['RS256', 'ES256']);
  });
});

describe('keys that would start but sign nothing usable are refused at load', () => {
  it('an RSA key under 2048 bits is refused (RS256 needs 2048)', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const error = await expectRefusal(() => parseSigningKey(pkcs8Pem(privateKey)), [pemBody(pkcs8Pem(privateKey))]);
    expect(error.message).toContain('2048');
  });

  it('a private JWK whose public half does not match is refused (sign-and-verify check)', async () => {
    const jwk = privateJwkOf(keyPair('rsa').privateKey);
    const n = jwk.n!;
    const foreign = { ...jwk, n: n.slice(0, 50) + (n[50] === 'A' ? 'B' : 'A') + n.slice(51) };
    await expectRefusal(() => parseSigningKey(JSON.stringify(foreign)), [jwk.d]);
  });

  it('a damaged development key file is named in the error, with what to do', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'latchkey-keys-'));
    try {
      const { mkdirSync, writeFileSync } = await import('node:fs');
      mkdirSync(path.join(dataDir, 'keys'));
      writeFileSync(path.join(dataDir, 'keys', 'signing-key.json'), '');
      const error = await expectRefusal(() =>
        loadKeyMaterial({ signingKey: undefined, verifyKeys: undefined, dataDir, production: false }),
      );
      expect(error.message).toContain(path.join(dataDir, 'keys', 'signing-key.json'));
      expect(error.message).toContain('delete it');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
