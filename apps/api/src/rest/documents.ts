import type { DocumentRow, OrganizationRow, UserRow } from '@latchkey/db';
import type { Role } from '@latchkey/db';
import { authorize, can, isAuthorizationDenied, type Ability, type AuthorizationDenied, type FieldRule } from '@latchkey/policy';
import { openDomainRequest, type DomainRequest, type DomainServices } from '../domain/request.js';
import { databaseOf, type RequestDatabase } from '../domain/request-scope.js';
import {
  archiveDocument,
  createDocument,
  deleteDocument,
  publishDocument,
  setLegalHold,
  updateDocument,
  type DocumentFields,
  type DocumentResult,
} from '../domain/document-mutations.js';
import { DEFAULT_PAGE_SIZE, getDocument, listDocuments, MAX_PAGE_SIZE, readCallerWithDocumentPage } from '../domain/documents.js';
import { InvalidInputError, type UserError } from '../domain/errors.js';
import { parseDateTime } from '../domain/validate.js';
import { AccountPolicy, DocumentPolicy } from '../domain/policies.js';
import type { Subject } from '../domain/subject.js';
import { type SignedInCaller, LEGAL_HOLD_STEP_UP } from '@latchkey/auth/tokens';
import { restError, type RestRequest, type RestResponse, type RestRoute } from './router.js';

export interface DocumentRoutesDeps {
  services: DomainServices;
  /** the field rules the schema declares on `Document` (`@can` on `internalNotes`): a body leaves out what they deny */
  fieldRules: readonly FieldRule<Subject>[];
  /** one deadline per HTTP request (DATABASE_TIMEOUT), from its first statement, for everything it asks the database */
  database: RequestDatabase;
}

/**
 * The REST form of a document: a field its schema rule denies the caller is left out (not null), as `internalNotes`
 * for callers below EDITOR.
 */
async function view(
  fieldRules: readonly FieldRule<Subject>[],
  request: DomainRequest,
  document: DocumentRow,
  organization?: OrganizationRow,
) {
  const { loaders, subject } = request;
  const [org, owner] = await Promise.all([
    organization ?? loaders.organization.load(document.organizationId),
    loaders.user.load(document.ownerId),
  ]);
  const body: Record<string, unknown> = {
    id: document.id,
    organization: { id: org!.id, slug: org!.slug, name: org!.name },
    owner: { id: document.ownerId, displayName: (owner as UserRow | null)?.displayName ?? null },
    title: document.title,
    body: document.body,
    status: document.status,
    legalHold: document.legalHold,
    embargoUntil: document.embargoUntil?.toISOString() ?? null,
    internalNotes: document.internalNotes,
    createdAt: document.createdAt.toISOString(),
    updatedAt: document.updatedAt.toISOString(),
    viewerCan: {
      update: can(subject, DocumentPolicy.update, document),
      publish: can(subject, DocumentPolicy.publish, document, org!),
      archive: can(subject, DocumentPolicy.archive, document),
      delete: can(subject, DocumentPolicy.delete, document),
      setLegalHold: can(subject, DocumentPolicy.setLegalHold, document),
    },
  };
  for (const rule of fieldRules) if (rule.field in body && !rule.allows(subject, document)) delete body[rule.field];
  return body;
}

/** Business failures as 409 Conflict, with the same codes as GraphQL's `userErrors`. */
function conflict(errors: UserError[]): RestResponse {
  const [first] = errors;
  return restError(409, first!.message, { code: first!.code, field: first!.field, userErrors: errors });
}

const EDITABLE = ['title', 'body', 'internalNotes', 'embargoUntil'] as const;

/** A JSON object with only the known fields, of the right types; anything else is 400 (nothing is written). */
function fieldsOf(body: unknown, allowed: readonly string[]): DocumentFields & Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new InvalidInputError('The request body must be a JSON object.');
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (!allowed.includes(key)) throw new InvalidInputError(`Unknown field "${key.slice(0, 64)}".`, [key.slice(0, 64)]);
    if (key === 'embargoUntil') {
      if (value !== null && typeof value !== 'string')
        throw new InvalidInputError('embargoUntil must be an RFC 3339 date-time (years 1-9999) or null.', [key]);
      const date = typeof value === 'string' ? parseDateTime(value) : null;
      if (value !== null && !date) throw new InvalidInputError('embargoUntil must be an RFC 3339 date-time (years 1-9999) or null.', [key]);
      fields[key] = date;
    } else if (key === 'internalNotes') {
      if (value !== null && typeof value !== 'string') throw new InvalidInputError('internalNotes must be a string or null.', [key]);
      fields[key] = value;
    } else {
      if (typeof value !== 'string') throw new InvalidInputError(`${key} must be a string.`, [key]);
      fields[key] = value;
    }
  }
  return fields;
}

function firstOf(query: URLSearchParams): number | undefined {
  const raw = query.get('first');
  if (raw === null) return undefined;
  if (!/^\d{1,4}$/.test(raw)) throw new InvalidInputError('first must be an integer from 0 to 100.', ['first']);
  return Number(raw);
}

/** The page size a list's `first` asks for, for its cost: a malformed one is refused by the handler, costing the default. */
function pageSizeAskedFor(query: URLSearchParams): number {
  const raw = query.get('first');
  return raw !== null && /^\d{1,4}$/.test(raw) ? Math.min(Number(raw), MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE;
}

/** What every document route is built from: the domain request of an HTTP request, its guards, its answers. */
interface DocumentRouteKit {
  services: DomainServices;
  database: RequestDatabase;
  requestFor(http: RestRequest<SignedInCaller>, handler: string): Promise<DomainRequest>;
  requires<Args extends unknown[]>(
    handler: string,
    ability: Ability<Subject, Args>,
    ...args: Args
  ): (http: RestRequest<SignedInCaller>) => Promise<AuthorizationDenied | null>;
  role(handler: string, required: Role): (http: RestRequest<SignedInCaller>) => Promise<AuthorizationDenied | null>;
  view(request: DomainRequest, document: DocumentRow, organization?: OrganizationRow): Promise<Record<string, unknown>>;
  changed(request: DomainRequest, result: DocumentResult, status?: number): Promise<RestResponse>;
}

/** `/api/documents`: the same services, abilities and NOT_FOUND hiding as the GraphQL fields. */
export function documentRoutes(deps: DocumentRoutesDeps): RestRoute<SignedInCaller>[] {
  const kit = documentRouteKit(deps);
  return [...readRoutes(kit), ...writeRoutes(kit)];
}

function documentRouteKit({ services, database, fieldRules }: DocumentRoutesDeps): DocumentRouteKit {
  /** The domain request (subject and loaders once per HTTP request), with how the caller signed in for step-ups. */
  const requestFor = (http: RestRequest<SignedInCaller>, handler: string): Promise<DomainRequest> =>
    openDomainRequest(services, http, { db: databaseOf(http, database), caller: http.caller, handler });
  /** The route-level marks of the matching GraphQL mutations (`@auth(role:)`, `@can(ability:)`), applied alike. */
  const requires =
    <Args extends unknown[]>(handler: string, ability: Ability<Subject, Args>, ...args: Args) =>
    async (http: RestRequest<SignedInCaller>): Promise<AuthorizationDenied | null> => {
      try {
        authorize((await requestFor(http, handler)).subject, ability, args, { handler });
        return null;
      } catch (error) {
        if (isAuthorizationDenied(error)) return error;
        throw error;
      }
    };
  const role = (handler: string, required: Role) => requires(handler, AccountPolicy.holdsRole, required);
  const viewOf = (request: DomainRequest, document: DocumentRow, organization?: OrganizationRow) =>
    view(fieldRules, request, document, organization);
  const changed = async (request: DomainRequest, result: DocumentResult, status = 200): Promise<RestResponse> =>
    result.document ? { status, body: await viewOf(request, result.document) } : conflict(result.userErrors);
  return { services, database, requestFor, requires, role, view: viewOf, changed };
}

/** The reads: a page of documents, and one document. */
function readRoutes({ services, database, requestFor, view }: DocumentRouteKit): RestRoute<SignedInCaller>[] {
  return [
    {
      method: 'GET',
      path: '/api/documents',
      scope: 'documents:read',
      // A list costs its page size (what `first` asks for, at most 100; 20 without it), plus one.
      cost: (http) => 1 + pageSizeAskedFor(http.query),
      async handler(http) {
        const statuses = http.query
          .getAll('status')
          .flatMap((value) => value.split(','))
          .filter(Boolean);
        const input = {
          organization: http.query.get('organization'),
          status: statuses.length > 0 ? statuses : null,
          first: firstOf(http.query),
          after: http.query.get('after'),
          withOwners: true, // each item names its owner
        };
        const fields = { filter: [], first: ['first'], after: ['after'] };
        readCallerWithDocumentPage(services, http, { db: databaseOf(http, database), caller: http.caller }, input, fields);
        const request = await requestFor(http, 'GET /api/documents');
        const page = await listDocuments(request, input, fields);
        const data = await Promise.all(page.edges.map(({ node }) => view(request, node)));
        return { status: 200, body: { data, pageInfo: { hasNextPage: page.pageInfo.hasNextPage, endCursor: page.pageInfo.endCursor } } };
      },
    },
    {
      method: 'GET',
      path: '/api/documents/:id',
      scope: 'documents:read',
      async handler(http) {
        const request = await requestFor(http, 'GET /api/documents/:id');
        const { document, organization } = await getDocument(request, http.params['id']!);
        return { status: 200, body: await view(request, document, organization) };
      },
    },
  ];
}

/** The writes, each guarded by the route-level marks of its GraphQL mutation. */
function writeRoutes({ requestFor, requires, role, view, changed }: DocumentRouteKit): RestRoute<SignedInCaller>[] {
  return [
    {
      method: 'POST',
      path: '/api/documents',
      scope: 'documents:write',
      guard: role('POST /api/documents', 'EDITOR'),
      async handler(http) {
        const request = await requestFor(http, 'POST /api/documents');
        const fields = fieldsOf(http.body, ['organization', ...EDITABLE]);
        if (typeof fields['organization'] !== 'string') throw new InvalidInputError('organization (a slug) is required.', ['organization']);
        const result = await createDocument(request, { ...fields, organization: fields['organization'] }, []);
        if (!result.document) return conflict(result.userErrors);
        return {
          status: 201,
          body: await view(request, result.document),
          headers: { location: `/api/documents/${result.document.id}` },
        };
      },
    },
    ...(['PATCH', 'PUT'] as const).map(
      (method): RestRoute<SignedInCaller> => ({
        method,
        path: '/api/documents/:id',
        scope: 'documents:write',
        guard: role(`${method} /api/documents/:id`, 'EDITOR'),
        async handler(http) {
          const request = await requestFor(http, `${method} /api/documents/:id`);
          const fields = fieldsOf(http.body, EDITABLE);
          return changed(request, await updateDocument(request, { ...fields, id: http.params['id']! }, []));
        },
      }),
    ),
    {
      method: 'POST',
      path: '/api/documents/:id/publish',
      scope: 'documents:write',
      guard: requires('POST /api/documents/:id/publish', AccountPolicy.publish),
      async handler(http) {
        const request = await requestFor(http, 'POST /api/documents/:id/publish');
        return changed(request, await publishDocument(request, http.params['id']!));
      },
    },
    {
      method: 'POST',
      path: '/api/documents/:id/archive',
      scope: 'documents:write',
      guard: role('POST /api/documents/:id/archive', 'EDITOR'),
      async handler(http) {
        const request = await requestFor(http, 'POST /api/documents/:id/archive');
        return changed(request, await archiveDocument(request, http.params['id']!));
      },
    },
    {
      // The twin of Mutation.setLegalHold, with its marks: @auth(role: ADMIN) and @stepUp(acr: phr).
      method: 'POST',
      path: '/api/documents/:id/legal-hold',
      scope: 'documents:write',
      guard: role('POST /api/documents/:id/legal-hold', 'ADMIN'),
      stepUp: LEGAL_HOLD_STEP_UP,
      async handler(http) {
        const request = await requestFor(http, 'POST /api/documents/:id/legal-hold');
        const body = http.body;
        const legalHold =
          typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>)['legalHold'] : undefined;
        const unknown = typeof body === 'object' && body !== null ? Object.keys(body).find((key) => key !== 'legalHold') : undefined;
        if (unknown !== undefined) throw new InvalidInputError(`Unknown field "${unknown.slice(0, 64)}".`, [unknown.slice(0, 64)]);
        if (typeof legalHold !== 'boolean') throw new InvalidInputError('legalHold (true or false) is required.', ['legalHold']);
        return changed(request, await setLegalHold(request, http.params['id']!, legalHold));
      },
    },
    {
      method: 'DELETE',
      path: '/api/documents/:id',
      scope: 'documents:write',
      guard: role('DELETE /api/documents/:id', 'EDITOR'),
      async handler(http) {
        const request = await requestFor(http, 'DELETE /api/documents/:id');
        const result = await deleteDocument(request, http.params['id']!);
        return result.deletedDocumentId ? { status: 204 } : conflict(result.userErrors);
      },
    },
  ];
}
