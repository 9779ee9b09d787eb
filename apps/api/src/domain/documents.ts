import {
  findDocumentByTitle,
  findDocumentWithOrganization,
  type DocumentListQuery,
  type DocumentRow,
  type DocumentStatus,
  type DocumentVisibility,
  type OrganizationRow,
} from '@latchkey/db';
import { can } from '@latchkey/policy';
import { authorizeIn, authorizeOrHide, type DomainRequest, type DomainRequestInput, type DomainServices } from './request.js';
import type { RequestScope } from './request-scope.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { InvalidInputError, NotFoundError } from './errors.js';
import { DocumentPolicy, visibleDocumentsScope } from './policies.js';
import type { Subject } from './subject.js';
import { subjectOfRow } from './subject.js';
import { isUuid, requireId, requireSlug, requireText } from './validate.js';

/**
 * `viewerCan`: the yes/no check of the very abilities the mutations authorize with (spec Authorization 10). Each
 * ability is decided when its field is read (a getter), so a page asks only what its selection names, and the
 * executor reads a property instead of calling a resolver (with its resolve info) five times per row.
 */
export class ViewerDocumentAbilities {
  constructor(
    private readonly subject: Subject | null,
    private readonly document: DocumentRow,
    private readonly organization: OrganizationRow,
  ) {}
  get update(): boolean {
    return can(this.subject, DocumentPolicy.update, this.document);
  }
  get publish(): boolean {
    return can(this.subject, DocumentPolicy.publish, this.document, this.organization);
  }
  get archive(): boolean {
    return can(this.subject, DocumentPolicy.archive, this.document);
  }
  get delete(): boolean {
    return can(this.subject, DocumentPolicy.delete, this.document);
  }
  get setLegalHold(): boolean {
    return can(this.subject, DocumentPolicy.setLegalHold, this.document);
  }
}

export interface DocumentWithOrganization {
  document: DocumentRow;
  organization: OrganizationRow;
}

export const DOCUMENT_STATUSES: readonly DocumentStatus[] = ['DRAFT', 'PUBLISHED', 'ARCHIVED'];
export const MAX_PAGE_SIZE = 100;
/** A list's page without `first`. */
export const DEFAULT_PAGE_SIZE = 20;

/**
 * One document the caller may see. Missing, another tenant's, and (for VIEWERs) unpublished or embargoed
 * documents all answer NOT_FOUND (spec Authorization 2, 6, 11).
 */
export async function getDocument(request: DomainRequest, id: string, field = ['id']): Promise<DocumentWithOrganization> {
  const found = await findDocumentWithOrganization(request.db, requireId(id, field));
  if (!found) throw new NotFoundError();
  request.loaders.organization.prime(found.organization.id, found.organization);
  authorizeOrHide(request, DocumentPolicy.view, [found.document, new Date()]);
  return found;
}

/**
 * One document by its organization and title (unique within an organization), under the same rule as by id:
 * NOT_FOUND for missing and hidden alike (another tenant's organization included).
 */
export async function getDocumentByTitle(
  request: DomainRequest,
  key: { organization: string; title: string },
  field = ['lookup', 'title'],
): Promise<DocumentWithOrganization> {
  const slug = requireSlug(key.organization, [...field, 'organization']);
  const title = requireText(key.title, [...field, 'title'], { min: 1, max: 200 });
  const found = await findDocumentByTitle(request.db, { organizationSlug: slug, title });
  if (!found) throw new NotFoundError();
  request.loaders.organization.prime(found.organization.id, found.organization);
  authorizeOrHide(request, DocumentPolicy.view, [found.document, new Date()]);
  return found;
}

export interface DocumentListInput {
  organization?: string | null | undefined;
  status?: readonly string[] | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
  /** the caller will show each document's owner: read the owners in the page's statement (primes the loaders) */
  withOwners?: boolean;
}

export interface DocumentPage {
  edges: { cursor: string; node: DocumentRow }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

type ListFields = { filter: string[]; first: string[]; after: string[] };
const LIST_FIELDS: ListFields = { filter: ['filter'], first: ['first'], after: ['after'] };

/** A list's input checked (INVALID_INPUT naming the field otherwise), and the statement's query for a visibility. */
function validListInput(input: DocumentListInput, fields: ListFields) {
  const first = input.first ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(first) || first < 0 || first > MAX_PAGE_SIZE) {
    throw new InvalidInputError(`first must be an integer from 0 to ${MAX_PAGE_SIZE}.`, fields.first);
  }
  const organizationSlug = input.organization == null ? null : requireSlug(input.organization, [...fields.filter, 'organization']);
  const statuses = input.status ?? null;
  if (statuses?.some((status) => !DOCUMENT_STATUSES.includes(status as DocumentStatus))) {
    throw new InvalidInputError(`status must be one of ${DOCUMENT_STATUSES.join(', ')}.`, [...fields.filter, 'status']);
  }
  const after = input.after == null ? null : decodeCursor(input.after, fields.after);
  return {
    first,
    queryFor: (visibility: DocumentVisibility): DocumentListQuery => ({
      visibility,
      organizationSlug,
      statuses: statuses as readonly DocumentStatus[] | null,
      after,
      limit: first + 1,
      withOwners: input.withOwners === true,
    }),
  };
}

/**
 * Starts reading the caller's attributes in the statement of the page they are about to list, when this request has
 * not read them yet and the caller's last list tells which documents they may see (its visibility): one round trip
 * instead of two. Nothing is decided here. `listDocuments` then decides on the attributes that statement read, as on
 * any (spec Authentication 3), and takes the rows only when its decision names exactly the list that was read; on a
 * changed role it reads the list again. Invalid input reads nothing ahead: `listDocuments` answers it.
 */
export function readCallerWithDocumentPage(
  services: DomainServices,
  scope: RequestScope,
  asking: Pick<DomainRequestInput, 'db' | 'caller'>,
  input: DocumentListInput,
  fields: ListFields = LIST_FIELDS,
): void {
  const { caller, db } = asking;
  if (caller === null || !isUuid(caller.subject) || services.subjects.isService(caller) || services.subjects.started(scope)) return;
  const loaders = services.loaders(scope, db);
  const guess = loaders.documentList.guessFor(caller.subject);
  if (!guess) return;
  let list: ReturnType<typeof validListInput>;
  try {
    list = validListInput(input, fields);
  } catch (error) {
    if (error instanceof InvalidInputError) return;
    throw error;
  }
  if (list.first === 0) return;
  const visibility: DocumentVisibility = guess.everything ? guess : { ...guess, now: new Date() };
  const read = loaders.documentList.readWithCaller(list.queryFor(visibility), caller.subject);
  services.subjects.readWith(
    scope,
    read.then((row) => subjectOfRow(row, services.subjects.scopesOf(caller))),
  );
}

/**
 * The documents the caller may see, newest first, filtered inside one SQL statement (spec Authorization 15)
 * and paged by keyset. Each row's organization (and with `withOwners`, its owner with the owner's organizations)
 * comes from the same statement and primes the loaders, so the page's resolvers find them at hand.
 */
export async function listDocuments(
  request: DomainRequest,
  input: DocumentListInput,
  fields: ListFields = LIST_FIELDS,
): Promise<DocumentPage> {
  const { first, queryFor } = validListInput(input, fields);
  authorizeIn(request, DocumentPolicy.list, []);
  const subject = request.subject!;
  const rows = first === 0 ? [] : await request.loaders.documentList.load(queryFor(visibleDocumentsScope(subject, new Date())), subject.id);

  const page = rows.slice(0, first);
  const { loaders } = request;
  const edges = page.map(({ document, organization, position, owner }) => {
    loaders.organization.prime(organization.id, organization);
    // A missing owner (null) is left to the loader, whose answer the owner field then reports.
    if (owner) {
      loaders.user.prime(owner.user.id, owner.user);
      loaders.organizationIdsOf.prime(owner.user.id, owner.organizationIds);
    }
    return { cursor: encodeCursor({ createdAt: position, id: document.id }), node: document };
  });
  return {
    edges,
    pageInfo: {
      hasNextPage: rows.length > first,
      hasPreviousPage: false,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}
