/**
 * @simplewebauthn/server, loaded on the first passkey ceremony rather than at start-up: with its ASN.1 and COSE
 * dependencies it adds about 20 MB to a process's resident memory, which a deployment that never sees a passkey
 * (or an instance that serves only the API) should not pay. The module loader caches the import after the first.
 */
export const webAuthnLibrary = () => import('@simplewebauthn/server');
