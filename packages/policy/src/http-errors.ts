import type { AuthorizationDenied } from './denial.js';

const REASONS = { 401: 'Unauthorized', 403: 'Forbidden' } as const;

/** The REST form of a denial (spec "Status codes of protected REST-style routes"): status and body. */
export function denialToHttp(denial: AuthorizationDenied): {
  status: 401 | 403;
  body: { statusCode: 401 | 403; message: string; error: string };
} {
  return {
    status: denial.status,
    body: { statusCode: denial.status, message: denial.message, error: REASONS[denial.status] },
  };
}
