import { findOrganizationBySlug, findUserWithRoles, type Database, type Role, type UserRow, type UserWithRoles } from '@latchkey/db';
import type { ServiceRegistration } from '../config/types.js';
import { requestMemo } from '@latchkey/http';
import type { AuthenticationEvidence, SignedInCaller } from '@latchkey/auth/tokens';
import type { RequestScope } from './request-scope.js';
import { isUuid } from './validate.js';
import type { GrantedScopes } from './scopes.js';
import { NO_SERVICE_PRINCIPALS, serviceActor, type ServicePrincipals } from './service-principals.js';

/**
 * Who is asking, the caller: a signed-in caller (`SignedInCaller`, its verified token's claims), an operator acting as
 * a user (the CLI: a subject and no sign-in to judge), or null for a guest. Its `subject` is the token's `sub`; the
 * `Subject` the policies judge is read from it (`SubjectLoader.load`).
 */
export type RequestCaller =
  | (Pick<SignedInCaller, 'subject'> & Partial<Pick<SignedInCaller, 'scope' | 'clientId'>> & AuthenticationEvidence)
  | null;

/**
 * The caller as the policies see it: volatile attributes read from the database at decision time
 * (role, suspension, verified e-mail), never trusted from token claims (spec Authentication 3).
 */
export interface Subject {
  id: string;
  superAdmin: boolean;
  suspended: boolean;
  emailVerified: boolean;
  /** organization id -> role */
  roles: ReadonlyMap<string, Role>;
  /**
   * The API scopes of the caller's token, which narrow all of the above (`ScopedUser` of @latchkey/policy); null for a
   * caller scopes do not restrict (the operator's CLI).
   */
  scopes: ReadonlySet<string> | null;
  /**
   * Set when the caller is a service (client credentials), a principal of its own kind: `id` is then
   * `client:<client id>`, never an account's, and `roles` holds its one organization. Absent for a person.
   */
  service?: { clientId: string };
}

/** Whether a subject is a person (an account), not a service. */
export const isPerson = (subject: Subject | null): subject is Subject => subject !== null && subject.service === undefined;

/**
 * The account row read with each subject: kept as a memo (not an enumerable field), so the policies' view of the
 * caller (and every denial event that carries it) shows the attributes alone.
 */
const accounts = requestMemo<UserRow>('account read with the subject');

/**
 * The caller's volatile attributes, read now (spec Authentication 3), with its token's scopes: null when the caller's
 * `subject` (the token's `sub`, or the account id the CLI acts as) names no account.
 */
export async function loadSubject(
  db: Database,
  caller: Pick<NonNullable<RequestCaller>, 'subject'>,
  scopes: ReadonlySet<string> | null,
): Promise<Subject | null> {
  return isUuid(caller.subject) ? subjectOfRow(await findUserWithRoles(db, caller.subject), scopes) : null;
}

/**
 * The subject made of the caller's row (its account and its roles) as just read (`findUserWithRoles`, or a
 * statement that read them with more), and the scopes of the token it called with.
 */
export function subjectOfRow(row: UserWithRoles | null, scopes: ReadonlySet<string> | null): Subject | null {
  if (!row) return null;
  const roles = new Map<string, Role>();
  for (const { organizationId, role } of row.roles) roles.set(organizationId, role);
  const subject: Subject = {
    id: row.id,
    superAdmin: row.superAdmin,
    suspended: row.suspended,
    emailVerified: row.emailVerified,
    roles,
    scopes,
  };
  accounts.set(subject, row.account);
  return subject;
}

/** The account row the statement that read this subject read with it (undefined for a subject made otherwise). */
export const accountReadWith = (subject: Subject): UserRow | undefined => accounts.get(subject);

/** The caller's attributes of each request scope: read once per scope, however many fields and checks ask. */
export interface SubjectLoader {
  /**
   * The caller's subject for this request key, read (once) through the request's own view of the database (its
   * deadline). A guest is null at once.
   */
  load(request: RequestScope, caller: RequestCaller, db: Database): Promise<Subject | null>;
  /**
   * The subject already read for this request key, without a promise; undefined while it has not been read yet.
   * A guest (no user id) is null at once.
   */
  now(request: RequestScope, caller: RequestCaller): Subject | null | undefined;
  /** The request key a subject was read for by this loader (undefined: another loader's, or a shared one). */
  scopeOf(subject: object): RequestScope | undefined;
  /** Uses a subject already read (one read shared by the subscribers of an event) for this request key. */
  prime(request: RequestScope, subject: Promise<Subject | null>): void;
  /** Whether this request key's subject has been read, or is being read. */
  started(request: RequestScope): boolean;
  /** The API scopes a caller's token holds, which narrow what its subject may do (null: scopes do not restrict it). */
  scopesOf: GrantedScopes;
  /**
   * Takes this request key's subject from a read made for it alone by another statement (the caller's row read
   * with a page of documents): as if `load` had read it, at the same moment.
   */
  readWith(request: RequestScope, read: Promise<Subject | null>): void;
  /** The caller's subject read now, outside any request's memo (a subscription's event); null for a guest. */
  fresh(db: Database, caller: RequestCaller, scopes: ReadonlySet<string> | null): Promise<Subject | null>;
  /** Whether a caller is a service (then its subject is no account's, see service-principals.ts). */
  isService(caller: RequestCaller): boolean;
}

/**
 * One subject per request however many fields ask (per-request memos keyed by the request's scope), with the scopes
 * of the caller's token (`scopesOf`; without it none restrict: the CLI's callers present no token).
 */
export function createSubjectLoader(
  scopesOf: GrantedScopes = () => null,
  services: ServicePrincipals = NO_SERVICE_PRINCIPALS,
): SubjectLoader {
  const read = (db: Database, caller: NonNullable<RequestCaller>, scopes: ReadonlySet<string> | null) => {
    const service = services.registrationOf(caller);
    return service ? loadServiceSubject(db, service, scopes) : loadSubject(db, caller, scopes);
  };
  // Kept on the request key and on the subject (requestMemo): the subject leads back to its request key, which
  // as a pair of WeakMaps kept every request that read one alive into the old generation.
  const byRequest = requestMemo<Promise<Subject | null>>('subject of the request');
  /** the subjects read so far, by request key: what `now` answers without waiting */
  const settled = requestMemo<Subject | null>('subject of the request, read');
  /** the request key each subject read was made for: a denial names its subject, and the audit trail finds the request */
  const scopes = requestMemo<RequestScope>('request the subject was read for');
  const remember = (request: RequestScope) => (subject: Subject | null) => {
    if (subject) scopes.set(subject, request);
    return subject;
  };
  const settle = (request: RequestScope, subject: Promise<Subject | null>) =>
    subject.then((value) => {
      settled.set(request, value);
      return value;
    });
  return {
    load(request, caller, db) {
      if (caller === null) return Promise.resolve(null);
      let subject = byRequest.get(request);
      if (!subject) byRequest.set(request, (subject = settle(request, read(db, caller, scopesOf(caller)).then(remember(request)))));
      return subject;
    },
    now: (request, caller) => (caller === null ? null : settled.get(request)),
    scopeOf: (subject) => scopes.get(subject as Subject),
    prime: (request, subject) => void byRequest.set(request, settle(request, subject)),
    started: (request) => byRequest.has(request),
    scopesOf,
    readWith: (request, reading) => void byRequest.set(request, settle(request, reading.then(remember(request)))),
    fresh: (db, caller, scopes) => (caller === null ? Promise.resolve(null) : read(db, caller, scopes)),
    isService: (caller) => services.registrationOf(caller) !== undefined,
  };
}

/**
 * A service's subject, read now: its role in its organization (none when the organization no longer exists: it then
 * sees nothing), its token's scopes, never a super-admin, never suspended, and no verified e-mail address (it has none:
 * what needs one, publishing, is a person's act).
 */
async function loadServiceSubject(db: Database, registration: ServiceRegistration, scopes: ReadonlySet<string> | null): Promise<Subject> {
  const organization = await findOrganizationBySlug(db, registration.organization);
  return {
    id: serviceActor(registration.clientId),
    superAdmin: false,
    suspended: false,
    emailVerified: false,
    roles: new Map(organization ? [[organization.id, registration.role]] : []),
    scopes,
    service: { clientId: registration.clientId },
  };
}
