import type { Client } from '../client.js';
import { DocumentsDocument, type DocumentStatus } from '../generated/graphql.js';

/**
 * An example of typed use (and a type check of the operations against the schema: if `title` or `status` went
 * away or became nullable, `pnpm typecheck` fails here): the titles of the caller's documents in one state.
 */
export async function documentTitles(client: Client, status: DocumentStatus, organization?: string): Promise<string[]> {
  const { documents } = await client.request(DocumentsDocument, { first: 50, filter: { status: [status], organization } });
  return documents.edges.filter(({ node }) => node.status === status).map(({ node }) => node.title);
}
