/**
 * Yoga's HTTP features that Latchkey's own HTTP layer answers before a request reaches Yoga, so Yoga's versions are
 * off. Shared with the bench's Yoga floor (bench/yoga-floor.ts), which must be set up exactly as Latchkey's Yoga.
 */
export const DONE_BY_THE_HTTP_LAYER = {
  // Enforced by the HTTP layer from Content-Length / counted bytes: Yoga's stream limiter costs ~145 us a request.
  maxRequestBodySize: false,
  // CORS is answered by the HTTP layer from the configured allow-list (Yoga's default reflects any origin).
  cors: false,
  // Only application/json bodies reach Yoga (CSRF rule); multipart is never parsed.
  multipart: false,
  // The service's pages are served by the HTTP layer; `/graphql` answers only GraphQL (and GraphiQL where enabled).
  landingPage: false,
} as const;
