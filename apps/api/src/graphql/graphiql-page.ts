import { createHash } from 'node:crypto';

/**
 * The GraphiQL page's options (what Yoga hands its renderer). Deprecated fields and enum values are in GraphiQL's
 * introspection by default; deprecated arguments and input fields only with `inputValueDeprecation`, so the
 * documentation explorer shows every `@deprecated` the schema has.
 */
export const GRAPHIQL_OPTIONS = { title: 'Latchkey GraphQL', inputValueDeprecation: true };

export interface GraphiQLPage {
  /** Yoga's `renderGraphiQL`: the page */
  render(): string;
  /** the page's Content-Security-Policy: nothing from any other origin, its one inline script by hash */
  contentSecurityPolicy(): string;
}

/**
 * GraphiQL from the installed packages (@graphql-yoga/render-graphiql inlines its scripts, styles and workers),
 * so the page works without network access; Yoga's default loads them from a CDN. The page is about 9 MB: its
 * module is loaded, and the page rendered, on the first request for it, once per process. Its policy allows
 * its own inline script by hash (not 'unsafe-inline'), the inline styles the editor adds at run time, its
 * editor workers (blob: URLs the page makes itself), data: images and fonts, and requests to this origin only.
 */
async function renderPage(): Promise<GraphiQLPage> {
  const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
  const html = renderGraphiQL(GRAPHIQL_OPTIONS);
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    ([, body]) => `'sha256-${createHash('sha256').update(body!).digest('base64')}'`,
  );
  const policy = [
    "default-src 'none'",
    `script-src ${scripts.join(' ')}`,
    "style-src 'unsafe-inline'",
    'img-src data: blob:',
    'font-src data:',
    'worker-src blob:',
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { render: () => html, contentSecurityPolicy: () => policy };
}

let rendered: Promise<GraphiQLPage> | undefined;

/** The page, rendered on first use (about 170 ms) and then kept for the life of the process. */
export function graphiQLPage(): Promise<GraphiQLPage> {
  rendered ??= renderPage();
  return rendered;
}
