import {
  deleteDocumentById,
  findOrganizationBySlug,
  insertDocument,
  lockDocumentWithOrganization,
  updateDocumentById,
  type DocumentRow,
} from '@latchkey/db';
import type { DocumentEventKind } from './document-events.js';
import { authorizeIn, authorizeOrHide, type DomainRequest } from './request.js';
import type { DocumentWithOrganization } from './documents.js';
import { InvalidInputError, NotFoundError, type UserError } from './errors.js';
import { DocumentPolicy, OrganizationPolicy } from './policies.js';
import { requireDate, requireId, requireSlug, requireText } from './validate.js';

export type DocumentResult = { document: DocumentRow; userErrors: [] } | { document: null; userErrors: UserError[] };

export const LIMITS = { title: 200, body: 100_000, internalNotes: 10_000 } as const;

export interface DocumentFields {
  title?: string | null | undefined;
  body?: string | null | undefined;
  internalNotes?: string | null | undefined;
  embargoUntil?: Date | null | undefined;
}

const ok = (document: DocumentRow): DocumentResult => ({ document, userErrors: [] });
const failed = (error: UserError): DocumentResult => ({ document: null, userErrors: [error] });

/** Checks and normalises the editable fields: `undefined` leaves a field alone, `null` clears a nullable one. */
function editableFields(
  input: DocumentFields,
  at: string[],
): Partial<Pick<DocumentRow, 'title' | 'body' | 'internalNotes' | 'embargoUntil'>> {
  const values: Partial<Pick<DocumentRow, 'title' | 'body' | 'internalNotes' | 'embargoUntil'>> = {};
  if (input.title === null) throw new InvalidInputError('title cannot be null.', [...at, 'title']);
  if (input.body === null) throw new InvalidInputError('body cannot be null.', [...at, 'body']);
  if (input.title !== undefined) {
    values.title = requireText(input.title, [...at, 'title'], { min: 1, max: LIMITS.title });
    if (values.title.trim() === '') throw new InvalidInputError('title must not be blank.', [...at, 'title']);
  }
  if (input.body !== undefined) values.body = requireText(input.body, [...at, 'body'], { max: LIMITS.body });
  if (input.internalNotes !== undefined) {
    values.internalNotes =
      input.internalNotes === null ? null : requireText(input.internalNotes, [...at, 'internalNotes'], { max: LIMITS.internalNotes });
  }
  if (input.embargoUntil !== undefined)
    values.embargoUntil = input.embargoUntil === null ? null : requireDate(input.embargoUntil, [...at, 'embargoUntil']);
  return values;
}

/** A unique violation of (organization, title): the title is taken (found through driver error wrappers). */
function isTitleTaken(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const { code, constraint, constraint_name: constraintName } = current as Record<string, unknown>;
    if (code === '23505' && (constraint ?? constraintName) === 'documents_organization_title_key') return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

const titleTaken = (at: string[]): DocumentResult =>
  failed({ field: [...at, 'title'], message: 'Another document of this organization already has this title.', code: 'TITLE_TAKEN' });

/** Adds a document to an organization the caller may see, as its owner (EDITOR or above). */
export async function createDocument(
  request: DomainRequest,
  input: DocumentFields & { organization: string },
  at = ['input'],
): Promise<DocumentResult> {
  const slug = requireSlug(input.organization, [...at, 'organization']);
  if (input.title === undefined) throw new InvalidInputError('title is required.', [...at, 'title']);
  const values = editableFields(input, at);
  const organization = await findOrganizationBySlug(request.db, slug);
  if (!organization) throw new NotFoundError();
  authorizeOrHide(request, OrganizationPolicy.view, [organization]);
  authorizeIn(request, DocumentPolicy.create, [organization]);
  try {
    const document = await request.db.transaction(async (tx) => {
      const created = await insertDocument(tx, {
        ...values,
        title: values.title!,
        organizationId: organization.id,
        ownerId: request.subject!.id,
      });
      await request.events.record(tx, 'CREATED', created);
      return created;
    });
    request.events.committed();
    request.loaders.organization.prime(organization.id, organization);
    return ok(document);
  } catch (error) {
    if (isTitleTaken(error)) return titleTaken(at);
    throw error;
  }
}

interface Writer {
  update(values: Partial<DocumentRow>): Promise<DocumentRow>;
  remove(): Promise<void>;
}
type Change = (found: DocumentWithOrganization, write: Writer) => Promise<DocumentResult>;

/**
 * The shape of every change to one document: load and lock the row, hide what the caller may not see
 * (NOT_FOUND), authorize the ability (FORBIDDEN), then apply the business rules and write, all in one
 * transaction so a concurrent change cannot slip between the check and the write. A change that wrote
 * something records its event in the same transaction, after the write.
 */
async function changeDocument(
  request: DomainRequest,
  kind: DocumentEventKind,
  id: string,
  idField: string[],
  authorizeChange: (found: DocumentWithOrganization) => void,
  change: Change,
): Promise<DocumentResult> {
  const documentId = requireId(id, idField);
  let written: DocumentRow | undefined;
  const result = await request.db.transaction(async (tx) => {
    const found = await lockDocumentWithOrganization(tx, documentId);
    if (!found) throw new NotFoundError();
    authorizeOrHide(request, DocumentPolicy.view, [found.document, new Date()]);
    authorizeChange(found);
    request.loaders.organization.prime(found.organization.id, found.organization);
    const outcome = await change(found, {
      update: async (values) => (written = (await updateDocumentById(tx, documentId, values))!),
      remove: async () => {
        await deleteDocumentById(tx, documentId);
        written = found.document;
      },
    });
    if (written) await request.events.record(tx, kind, written);
    return outcome;
  });
  if (written) request.events.committed();
  return result;
}

const invalidState = (message: string): DocumentResult => failed({ field: null, message, code: 'INVALID_STATE' });

export async function updateDocument(
  request: DomainRequest,
  input: DocumentFields & { id: string },
  at = ['input'],
): Promise<DocumentResult> {
  const values = editableFields(input, at);
  try {
    return await changeDocument(
      request,
      'UPDATED',
      input.id,
      [...at, 'id'],
      ({ document }) => authorizeIn(request, DocumentPolicy.update, [document]),
      async ({ document }, write) => {
        if (document.status === 'ARCHIVED') return invalidState('Archived documents are read-only.');
        return ok(Object.keys(values).length === 0 ? document : await write.update(values));
      },
    );
  } catch (error) {
    if (isTitleTaken(error)) return titleTaken(at);
    throw error;
  }
}

export function publishDocument(request: DomainRequest, id: string, at = ['id']): Promise<DocumentResult> {
  return changeDocument(
    request,
    'PUBLISHED',
    id,
    at,
    ({ document, organization }) => authorizeIn(request, DocumentPolicy.publish, [document, organization]),
    async ({ document }, write) =>
      document.status === 'DRAFT' ? ok(await write.update({ status: 'PUBLISHED' })) : invalidState('Only drafts can be published.'),
  );
}

export function archiveDocument(request: DomainRequest, id: string, at = ['id']): Promise<DocumentResult> {
  return changeDocument(
    request,
    'ARCHIVED',
    id,
    at,
    ({ document }) => authorizeIn(request, DocumentPolicy.archive, [document]),
    async ({ document }, write) =>
      document.status === 'ARCHIVED' ? invalidState('The document is already archived.') : ok(await write.update({ status: 'ARCHIVED' })),
  );
}

export async function setLegalHold(request: DomainRequest, id: string, legalHold: boolean, at = ['id']): Promise<DocumentResult> {
  let changed: string | undefined;
  const result = await changeDocument(
    request,
    'LEGAL_HOLD_CHANGED',
    id,
    at,
    ({ document }) => authorizeIn(request, DocumentPolicy.setLegalHold, [document]),
    async ({ document }, write) => {
      if (document.legalHold === legalHold) return ok(document);
      changed = document.id;
      return ok(await write.update({ legalHold }));
    },
  );
  // Told once committed (changeDocument's transaction has ended).
  if (changed) {
    const details = { documentId: changed, legalHold };
    request.audit.record({ type: 'legal_hold.changed', details, actor: request.subject?.id ?? null, requestId: request.requestId });
  }
  return result;
}

/** Deletes a document; the binding delete ability refuses anyone while it is under legal hold. */
export async function deleteDocument(
  request: DomainRequest,
  id: string,
  at = ['id'],
): Promise<{ deletedDocumentId: string | null; userErrors: UserError[] }> {
  const result = await changeDocument(
    request,
    'DELETED',
    id,
    at,
    ({ document }) => authorizeIn(request, DocumentPolicy.delete, [document]),
    async ({ document }, write) => {
      await write.remove();
      return ok(document);
    },
  );
  return { deletedDocumentId: result.document?.id ?? null, userErrors: result.userErrors };
}
