/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
export type DocumentFilter = {
  /** Only this organization's documents (its slug). */
  organization?: string | null | undefined;
  /** Only documents in one of these states. */
  status?: Array<DocumentStatus> | null | undefined;
};

export type DocumentStatus =
  | 'ARCHIVED'
  | 'DRAFT'
  | 'PUBLISHED';

export type Plan =
  | 'FREE'
  | 'PRO';

/** A member's role in an organization; a role grants itself and every role below it. */
export type Role =
  | 'ADMIN'
  | 'EDITOR'
  | 'OWNER'
  | 'VIEWER';

export type UserErrorCode =
  /** The document's current state does not allow this change. */
  | 'INVALID_STATE'
  /** The organization would be left without an OWNER. */
  | 'LAST_OWNER'
  /** Another document of the organization already has this title. */
  | 'TITLE_TAKEN';

export type DocumentDashboardQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
  organization: string;
  pinned: string;
}>;


export type DocumentDashboardQuery = { status: { service: string, version: string, serverTime: string }, viewer: { subject: string, amr: Array<string>, acr: string | null, authTime: string | null, expiresAt: string, scope: Array<string> } | null, me: { id: string, email: string | null, displayName: string | null, emailVerified: boolean, memberships: Array<{ role: Role, organization: { id: string, slug: string, name: string, plan: Plan } }>, passkeys: Array<{ id: string, label: string | null, deviceType: string, backedUp: boolean, transports: Array<string>, createdAt: string, lastUsedAt: string | null }> | null } | null, organization: { billingEmail: string | null, id: string, slug: string, name: string, plan: Plan } | null, pinned: { __typename: 'Document', id: string, title: string, body: string, status: DocumentStatus, legalHold: boolean, embargoUntil: string | null, createdAt: string, updatedAt: string, internalNotes: string | null, owner: { id: string, email: string | null, displayName: string | null, emailVerified: boolean, memberships: Array<{ role: Role, user: { id: string, displayName: string | null } }> }, organization: { id: string, slug: string, name: string, plan: Plan }, viewerCan: { update: boolean, publish: boolean, archive: boolean, delete: boolean, setLegalHold: boolean } } | null, recent: { edges: Array<{ cursor: string, node: { __typename: 'Document', id: string, title: string, body: string, status: DocumentStatus, legalHold: boolean, embargoUntil: string | null, createdAt: string, updatedAt: string, internalNotes: string | null, organization: { id: string, slug: string, name: string, plan: Plan }, owner: { id: string, email: string | null, displayName: string | null, emailVerified: boolean }, viewerCan: { update: boolean, publish: boolean, archive: boolean, delete: boolean, setLegalHold: boolean } } }>, pageInfo: { hasNextPage: boolean, hasPreviousPage: boolean, startCursor: string | null, endCursor: string | null } }, drafts: { edges: Array<{ cursor: string, node: { __typename: 'Document', id: string, title: string, body: string, status: DocumentStatus, legalHold: boolean, embargoUntil: string | null, createdAt: string, updatedAt: string, internalNotes: string | null, organization: { id: string, slug: string, name: string, plan: Plan }, owner: { id: string, email: string | null, displayName: string | null, emailVerified: boolean }, viewerCan: { update: boolean, publish: boolean, archive: boolean, delete: boolean, setLegalHold: boolean } } }>, pageInfo: { hasNextPage: boolean, hasPreviousPage: boolean, startCursor: string | null, endCursor: string | null } }, published: { edges: Array<{ cursor: string, node: { __typename: 'Document', id: string, title: string, body: string, status: DocumentStatus, legalHold: boolean, embargoUntil: string | null, createdAt: string, updatedAt: string, internalNotes: string | null, organization: { id: string, slug: string, name: string, plan: Plan }, owner: { id: string, email: string | null, displayName: string | null, emailVerified: boolean }, viewerCan: { update: boolean, publish: boolean, archive: boolean, delete: boolean, setLegalHold: boolean } } }>, pageInfo: { hasNextPage: boolean, hasPreviousPage: boolean, startCursor: string | null, endCursor: string | null } }, archived: { edges: Array<{ cursor: string, node: { __typename: 'Document', id: string, title: string, body: string, status: DocumentStatus, legalHold: boolean, embargoUntil: string | null, createdAt: string, updatedAt: string, internalNotes: string | null, organization: { id: string, slug: string, name: string, plan: Plan }, owner: { id: string, email: string | null, displayName: string | null, emailVerified: boolean }, viewerCan: { update: boolean, publish: boolean, archive: boolean, delete: boolean, setLegalHold: boolean } } }>, pageInfo: { hasNextPage: boolean, hasPreviousPage: boolean, startCursor: string | null, endCursor: string | null } }, inReview: { edges: Array<{ cursor: string, node: { __typename: 'Document', id: string, title: string, body: string, status: DocumentStatus, legalHold: boolean, embargoUntil: string | null, createdAt: string, updatedAt: string, internalNotes: string | null, organization: { id: string, slug: string, name: string, plan: Plan }, owner: { id: string, email: string | null, displayName: string | null, emailVerified: boolean }, viewerCan: { update: boolean, publish: boolean, archive: boolean, delete: boolean, setLegalHold: boolean } } }>, pageInfo: { hasNextPage: boolean, hasPreviousPage: boolean, startCursor: string | null, endCursor: string | null } }, everywhere: { edges: Array<{ cursor: string, node: { __typename: 'Document', id: string, title: string, body: string, status: DocumentStatus, legalHold: boolean, embargoUntil: string | null, createdAt: string, updatedAt: string, internalNotes: string | null, organization: { id: string, slug: string, name: string, plan: Plan }, owner: { id: string, email: string | null, displayName: string | null, emailVerified: boolean }, viewerCan: { update: boolean, publish: boolean, archive: boolean, delete: boolean, setLegalHold: boolean } } }>, pageInfo: { hasNextPage: boolean, hasPreviousPage: boolean, startCursor: string | null, endCursor: string | null } } };

export type DashboardAccountFragment = { id: string, email: string | null, displayName: string | null, emailVerified: boolean, memberships: Array<{ role: Role, organization: { id: string, slug: string, name: string, plan: Plan } }>, passkeys: Array<{ id: string, label: string | null, deviceType: string, backedUp: boolean, transports: Array<string>, createdAt: string, lastUsedAt: string | null }> | null };

export type DashboardOrganizationFragment = { id: string, slug: string, name: string, plan: Plan };

export type DashboardDocumentFragment = { __typename: 'Document', id: string, title: string, body: string, status: DocumentStatus, legalHold: boolean, embargoUntil: string | null, createdAt: string, updatedAt: string, internalNotes: string | null, organization: { id: string, slug: string, name: string, plan: Plan }, owner: { id: string, email: string | null, displayName: string | null, emailVerified: boolean }, viewerCan: { update: boolean, publish: boolean, archive: boolean, delete: boolean, setLegalHold: boolean } };

export type DocumentsQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
  filter?: DocumentFilter | null | undefined;
}>;


export type DocumentsQuery = { documents: { edges: Array<{ node: { id: string, title: string, status: DocumentStatus, legalHold: boolean, embargoUntil: string | null, organization: { slug: string }, viewerCan: { setLegalHold: boolean } } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type SetLegalHoldMutationVariables = Exact<{
  id: string;
  legalHold: boolean;
}>;


export type SetLegalHoldMutation = { setLegalHold: { document: { id: string, legalHold: boolean } | null, userErrors: Array<{ field: Array<string> | null, message: string, code: UserErrorCode }> } | null };

export type MyPasskeysQueryVariables = Exact<{ [key: string]: never; }>;


export type MyPasskeysQuery = { me: { id: string, passkeys: Array<{ id: string, label: string | null, deviceType: string, backedUp: boolean, createdAt: string, lastUsedAt: string | null }> | null } | null };

export type RenamePasskeyMutationVariables = Exact<{
  id: string;
  label: string;
}>;


export type RenamePasskeyMutation = { renamePasskey: { passkey: { id: string, label: string | null } | null, userErrors: Array<{ field: Array<string> | null, message: string, code: UserErrorCode }> } | null };

export type RemovePasskeyMutationVariables = Exact<{
  id: string;
}>;


export type RemovePasskeyMutation = { removePasskey: { removedPasskeyId: string | null, userErrors: Array<{ field: Array<string> | null, message: string, code: UserErrorCode }> } | null };

export type RateLimitQueryVariables = Exact<{ [key: string]: never; }>;


export type RateLimitQuery = { rateLimit: { maximumAvailable: number, currentlyAvailable: number, restoreRate: number, plan: Plan | null } | null };

export type StatusQueryVariables = Exact<{ [key: string]: never; }>;


export type StatusQuery = { status: { service: string, version: string, serverTime: string } };

export type ViewerQueryVariables = Exact<{ [key: string]: never; }>;


export type ViewerQuery = { viewer: { subject: string, amr: Array<string>, acr: string | null, authTime: string | null, expiresAt: string, scope: Array<string> } | null };

export type WhoamiQueryVariables = Exact<{ [key: string]: never; }>;


export type WhoamiQuery = { viewer: { subject: string, scope: Array<string>, expiresAt: string, user: { email: string | null, displayName: string | null } | null } | null };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}
export const DashboardOrganizationFragmentDoc = new TypedDocumentString(`
    fragment DashboardOrganization on Organization {
  id
  slug
  name
  plan
}
    `, {"fragmentName":"DashboardOrganization"}) as unknown as TypedDocumentString<DashboardOrganizationFragment, unknown>;
export const DashboardAccountFragmentDoc = new TypedDocumentString(`
    fragment DashboardAccount on User {
  id
  email
  displayName
  emailVerified
  memberships {
    role
    organization {
      ...DashboardOrganization
    }
  }
  passkeys {
    id
    label
    deviceType
    backedUp
    transports
    createdAt
    lastUsedAt
  }
}
    fragment DashboardOrganization on Organization {
  id
  slug
  name
  plan
}`, {"fragmentName":"DashboardAccount"}) as unknown as TypedDocumentString<DashboardAccountFragment, unknown>;
export const DashboardDocumentFragmentDoc = new TypedDocumentString(`
    fragment DashboardDocument on Document {
  __typename
  id
  title
  body
  status
  legalHold
  embargoUntil
  createdAt
  updatedAt
  internalNotes
  organization {
    ...DashboardOrganization
  }
  owner {
    id
    email
    displayName
    emailVerified
  }
  viewerCan {
    update
    publish
    archive
    delete
    setLegalHold
  }
}
    fragment DashboardOrganization on Organization {
  id
  slug
  name
  plan
}`, {"fragmentName":"DashboardDocument"}) as unknown as TypedDocumentString<DashboardDocumentFragment, unknown>;
export const DocumentDashboardDocument = new TypedDocumentString(`
    query DocumentDashboard($first: Int = 10, $after: String, $organization: String!, $pinned: ID!) {
  status {
    service
    version
    serverTime
  }
  viewer {
    subject
    amr
    acr
    authTime
    expiresAt
    scope
  }
  me {
    ...DashboardAccount
  }
  organization(slug: $organization) {
    ...DashboardOrganization
    billingEmail
  }
  pinned: document(id: $pinned) {
    ...DashboardDocument
    owner {
      memberships {
        role
        user {
          id
          displayName
        }
      }
    }
  }
  recent: documents(
    first: $first
    after: $after
    filter: {organization: $organization}
  ) {
    edges {
      cursor
      node {
        ...DashboardDocument
      }
    }
    pageInfo {
      hasNextPage
      hasPreviousPage
      startCursor
      endCursor
    }
  }
  drafts: documents(
    first: $first
    filter: {organization: $organization, status: [DRAFT]}
  ) {
    edges {
      cursor
      node {
        ...DashboardDocument
      }
    }
    pageInfo {
      hasNextPage
      hasPreviousPage
      startCursor
      endCursor
    }
  }
  published: documents(
    first: $first
    filter: {organization: $organization, status: [PUBLISHED]}
  ) {
    edges {
      cursor
      node {
        ...DashboardDocument
      }
    }
    pageInfo {
      hasNextPage
      hasPreviousPage
      startCursor
      endCursor
    }
  }
  archived: documents(
    first: 5
    filter: {organization: $organization, status: [ARCHIVED]}
  ) {
    edges {
      cursor
      node {
        ...DashboardDocument
      }
    }
    pageInfo {
      hasNextPage
      hasPreviousPage
      startCursor
      endCursor
    }
  }
  inReview: documents(
    first: $first
    filter: {organization: $organization, status: [DRAFT, PUBLISHED]}
  ) {
    edges {
      cursor
      node {
        ...DashboardDocument
      }
    }
    pageInfo {
      hasNextPage
      hasPreviousPage
      startCursor
      endCursor
    }
  }
  everywhere: documents(
    first: $first
    filter: {status: [DRAFT, PUBLISHED, ARCHIVED]}
  ) {
    edges {
      cursor
      node {
        ...DashboardDocument
      }
    }
    pageInfo {
      hasNextPage
      hasPreviousPage
      startCursor
      endCursor
    }
  }
}
    fragment DashboardAccount on User {
  id
  email
  displayName
  emailVerified
  memberships {
    role
    organization {
      ...DashboardOrganization
    }
  }
  passkeys {
    id
    label
    deviceType
    backedUp
    transports
    createdAt
    lastUsedAt
  }
}
fragment DashboardOrganization on Organization {
  id
  slug
  name
  plan
}
fragment DashboardDocument on Document {
  __typename
  id
  title
  body
  status
  legalHold
  embargoUntil
  createdAt
  updatedAt
  internalNotes
  organization {
    ...DashboardOrganization
  }
  owner {
    id
    email
    displayName
    emailVerified
  }
  viewerCan {
    update
    publish
    archive
    delete
    setLegalHold
  }
}`, {"hash":"sha256:73a9af29a9c2f9a689b98a3565cf539b5d3c33b1772e2e1fba409b5d421485a0"}) as unknown as TypedDocumentString<DocumentDashboardQuery, DocumentDashboardQueryVariables>;
export const DocumentsDocument = new TypedDocumentString(`
    query Documents($first: Int = 20, $after: String, $filter: DocumentFilter) {
  documents(first: $first, after: $after, filter: $filter) {
    edges {
      node {
        id
        title
        status
        legalHold
        embargoUntil
        organization {
          slug
        }
        viewerCan {
          setLegalHold
        }
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}
    `, {"hash":"sha256:fca744d905752543d3bbd627434c2fc5218933766485a7f3714163c9a2c93690"}) as unknown as TypedDocumentString<DocumentsQuery, DocumentsQueryVariables>;
export const SetLegalHoldDocument = new TypedDocumentString(`
    mutation SetLegalHold($id: ID!, $legalHold: Boolean!) {
  setLegalHold(id: $id, legalHold: $legalHold) {
    document {
      id
      legalHold
    }
    userErrors {
      field
      message
      code
    }
  }
}
    `, {"hash":"sha256:37ac3c0fcf63895cebc938d2e179a0989d7ac90d2093203a603a674d204fbf10"}) as unknown as TypedDocumentString<SetLegalHoldMutation, SetLegalHoldMutationVariables>;
export const MyPasskeysDocument = new TypedDocumentString(`
    query MyPasskeys {
  me {
    id
    passkeys {
      id
      label
      deviceType
      backedUp
      createdAt
      lastUsedAt
    }
  }
}
    `, {"hash":"sha256:162a6b0fd8db79d4a8fb8cfdecc6d10d7972d66bf8c9639e96e54a1a6567bea6"}) as unknown as TypedDocumentString<MyPasskeysQuery, MyPasskeysQueryVariables>;
export const RenamePasskeyDocument = new TypedDocumentString(`
    mutation RenamePasskey($id: ID!, $label: String!) {
  renamePasskey(id: $id, label: $label) {
    passkey {
      id
      label
    }
    userErrors {
      field
      message
      code
    }
  }
}
    `, {"hash":"sha256:fb76dcc2a4562ba6cd0ca5b95b87a1b4c64de4a6d5fe44e9749585d2c9779658"}) as unknown as TypedDocumentString<RenamePasskeyMutation, RenamePasskeyMutationVariables>;
export const RemovePasskeyDocument = new TypedDocumentString(`
    mutation RemovePasskey($id: ID!) {
  removePasskey(id: $id) {
    removedPasskeyId
    userErrors {
      field
      message
      code
    }
  }
}
    `, {"hash":"sha256:ffb986e3a33d9797d71640261e7ee924b9e361d2e1867432adaad985885364b5"}) as unknown as TypedDocumentString<RemovePasskeyMutation, RemovePasskeyMutationVariables>;
export const RateLimitDocument = new TypedDocumentString(`
    query RateLimit {
  rateLimit {
    maximumAvailable
    currentlyAvailable
    restoreRate
    plan
  }
}
    `, {"hash":"sha256:c49b09eebf07847adb9cac10a2c438363eeb6ec7066e77ac68c00748c86b8dea"}) as unknown as TypedDocumentString<RateLimitQuery, RateLimitQueryVariables>;
export const StatusDocument = new TypedDocumentString(`
    query Status {
  status {
    service
    version
    serverTime
  }
}
    `, {"hash":"sha256:0cd2acaa65759265217500a99e1098d93dd36149d2726fe06c677b8a7e429786"}) as unknown as TypedDocumentString<StatusQuery, StatusQueryVariables>;
export const ViewerDocument = new TypedDocumentString(`
    query Viewer {
  viewer {
    subject
    amr
    acr
    authTime
    expiresAt
    scope
  }
}
    `, {"hash":"sha256:f200cdf0165982ceea512bb8bc759bcb913e4c13b78716cb41d1e12e2dda9c59"}) as unknown as TypedDocumentString<ViewerQuery, ViewerQueryVariables>;
export const WhoamiDocument = new TypedDocumentString(`
    query Whoami {
  viewer {
    subject
    scope
    expiresAt
    user {
      email
      displayName
    }
  }
}
    `, {"hash":"sha256:d8f77bac8453bea008b8f5cfc11e4a3795eb909d2cb3a261ce16522baf9d8577"}) as unknown as TypedDocumentString<WhoamiQuery, WhoamiQueryVariables>;