import { formTargetOf } from '@latchkey/http';
import type { KoaContextWithOIDC } from 'oidc-provider';

/**
 * Which origins may read the token endpoint's answers from a browser (a single-page app exchanging its code with
 * `fetch`): a public client's own, the origins of its registered redirect URIs, and no other. Confidential clients
 * call from their servers, never from a page.
 */
export function tokenEndpointCors(_ctx: KoaContextWithOIDC, origin: string, client: { clientAuthMethod: string; redirectUris?: string[] }) {
  if (origin === 'null' || client.clientAuthMethod !== 'none') return false;
  return (client.redirectUris ?? []).some((uri) => formTargetOf(uri) === origin);
}
