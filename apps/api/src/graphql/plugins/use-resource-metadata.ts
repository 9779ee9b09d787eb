import { withResourceMetadata } from '@latchkey/auth/tokens';
import type { Plugin } from 'graphql-yoga';

export interface ResourceMetadataOptions {
  /** the API's protected resource metadata (RFC 9728), named by every 401's challenge */
  metadataUrl: string;
}

/**
 * Every challenge of `/graphql` that asks for a token (no token, a refused one, a step-up: a 401, or its twin under
 * `application/json`, 200) names where the API's protected resource metadata is (RFC 9728 §5.1: `resource_metadata`
 * in `WWW-Authenticate`), whichever check refused it; a missing scope's challenge does not (`withResourceMetadata`).
 */
export function useResourceMetadata({ metadataUrl }: ResourceMetadataOptions): Plugin {
  return {
    onResponse({ response }) {
      const challenge = response.headers.get('www-authenticate');
      if (challenge) response.headers.set('www-authenticate', withResourceMetadata(challenge, metadataUrl));
    },
  };
}
