/**
 * DPoP (RFC 9449) for browser clients: an ES256 key made by WebCrypto as non-extractable (script can sign with it,
 * never read it), kept in IndexedDB so a reload keeps the key its tokens are bound to, and the proofs signed with
 * it. Where IndexedDB is missing (Node), the key lives as long as the signer.
 */
export interface DpopSigner {
  /** A proof for one request: its method, its URL (query and fragment dropped), and the access token it carries. */
  proof(method: string, url: string, accessToken?: string): Promise<string>;
}

export interface DpopSignerOptions {
  /** the IndexedDB database the key is kept in. @default 'latchkey-dpop' */
  database?: string;
  /** which key of that database (one per application or account). @default 'default' */
  name?: string;
}

const STORE = 'keys';
const encoder = new TextEncoder();

function base64url(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let binary = '';
  for (const byte of view) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const json64 = (value: unknown) => base64url(encoder.encode(JSON.stringify(value)));

function request<T>(operation: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    operation.onsuccess = () => resolve(operation.result);
    operation.onerror = () => reject(operation.error);
  });
}

async function openStore(database: string): Promise<IDBDatabase> {
  const opening = indexedDB.open(database, 1);
  opening.onupgradeneeded = () => opening.result.createObjectStore(STORE);
  return request(opening);
}

const newKeyPair = () =>
  crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']) as Promise<CryptoKeyPair>;

/** This browser's key pair for `name`: the stored one, or a new one stored now (first writer wins). */
async function keyPairFor(options: DpopSignerOptions): Promise<CryptoKeyPair> {
  if (typeof indexedDB === 'undefined') return newKeyPair();
  const db = await openStore(options.database ?? 'latchkey-dpop');
  try {
    const name = options.name ?? 'default';
    const stored = (await request(db.transaction(STORE).objectStore(STORE).get(name))) as CryptoKeyPair | undefined;
    if (stored) return stored;
    const created = await newKeyPair();
    const store = db.transaction(STORE, 'readwrite').objectStore(STORE);
    // `add` fails if another tab stored one meanwhile: then that one is the key.
    try {
      await request(store.add(created, name));
      return created;
    } catch {
      return (await request(db.transaction(STORE).objectStore(STORE).get(name))) as CryptoKeyPair;
    }
  } finally {
    db.close();
  }
}

/** The DPoP signer of this browser (or process): its key is made once and reused. */
export async function createDpopSigner(options: DpopSignerOptions = {}): Promise<DpopSigner> {
  const keys = await keyPairFor(options);
  const { kty, crv, x, y } = (await crypto.subtle.exportKey('jwk', keys.publicKey)) as JsonWebKey;
  const header = json64({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty, crv, x, y } });
  return {
    async proof(method, url, accessToken) {
      const target = new URL(url, globalThis.location?.href);
      target.search = '';
      target.hash = '';
      const claims: Record<string, unknown> = {
        htm: method.toUpperCase(),
        htu: target.href,
        iat: Math.floor(Date.now() / 1000),
        jti: crypto.randomUUID(),
      };
      if (accessToken) claims['ath'] = base64url(await crypto.subtle.digest('SHA-256', encoder.encode(accessToken)));
      const input = `${header}.${json64(claims)}`;
      // WebCrypto's ECDSA signature is r || s, 64 bytes: exactly the JWS ES256 signature.
      const signature = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, keys.privateKey, encoder.encode(input));
      return `${input}.${base64url(signature)}`;
    },
  };
}
