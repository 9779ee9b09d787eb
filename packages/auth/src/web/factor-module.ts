import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Route } from '@latchkey/http';
import type Provider from 'oidc-provider';
import type { DeliveryHandler } from '../delivery/index.js';
import type { Factor, FactorIdentity } from '../factors/index.js';
import type { PasskeyRelyingParty } from '../passkeys/index.js';
import type { AccessTokenVerifier } from '../principal/access-token-verifier.js';
import type { SignInLimits } from '../rate-limit/index.js';
import type { UpstreamConfig } from '../upstream/index.js';
import type { ClientCertificateUsers } from '../x509/certificate-subjects.js';
import type { LoginContext } from './context.js';

/**
 * The settings that decide which factors a deployment offers (RP_ID, the TLS listener with X509_USERS_FILE,
 * UPSTREAM_ISSUER, PASSWORDS): what a factor's `offeredWhen` reads.
 */
export interface FactorSettings {
  passkeys: boolean;
  clientCertificates: boolean;
  upstream: boolean;
  passwords: boolean;
}

/**
 * A sign-in factor, as one unit: who it is to the rest of the sign-in (authority, `amr`, label, whether it is a
 * later step), when a deployment offers it, and its pages and routes. Its web half is loaded when the login routes
 * are made, so a configuration check (the CLI's included) reads the registry without loading the database client.
 */
export interface SignInFactor extends FactorIdentity {
  /** whether a deployment with these settings verifies it (a rule may require it only then) */
  offeredWhen(settings: FactorSettings): boolean;
  /** its pages and routes */
  web(): Promise<CreateFactorWeb>;
}

export type CreateFactorWeb = (deps: FactorWebDeps) => FactorWeb;

/** What the login routes' options hold that a factor's pages may read. */
export interface FactorWebSettings {
  /** the OpenID provider whose sessions and interactions the pages complete */
  provider: Provider;
  /** clients whose consent is implicit (first-party): a consent prompt (`prompt=consent`) is granted at once */
  firstPartyClientIds: readonly string[];
  /** where one-time tokens are delivered */
  delivery: DeliveryHandler;
  /** verifies access tokens: an API client may add a passkey with one */
  verifier: AccessTokenVerifier;
  /** the server secret that sealing keys are derived from (TOTP secrets, pending upstream requests): every instance sharing it agrees */
  keySecret: string;
  /** unknown addresses that ask for a link get an account (SELF_SIGNUP) */
  selfSignup: boolean;
  /** a sign-in link signs in only the browser that asked for it (BIND_LINKS_TO_BROWSER). @default false */
  bindLinksToBrowser?: boolean;
  /** passkeys (RP_ID); undefined: switched off */
  relyingParty: PasskeyRelyingParty | undefined;
  /** whether accounts may have a password (PASSWORDS) */
  passwords: boolean;
  /** the upstream OpenID provider (UPSTREAM_ISSUER); undefined: none */
  upstream: UpstreamConfig | undefined;
  /** who a client certificate signs in (X509_USERS_FILE); undefined: `/login/x509` does not exist */
  clientCertificates: ClientCertificateUsers | undefined;
}

/** The account signed in to the provider in this browser, as the account page sees it. */
export interface SignedInAccount {
  userId: string;
  sessionUid: string;
  email: string;
  amr: string[];
  authTime: number;
}

/** What the account page lends a factor's account forms: who is signed in, the credential-form gate, its refusals. */
export interface AccountPageHelpers {
  /** the account signed in to the provider in this browser; null for none or a suspended one */
  signedIn(req: IncomingMessage, res: ServerResponse): Promise<SignedInAccount | null>;
  /** a same-origin form post by the signed-in account, recent enough to change its credentials; undefined once refused */
  credentialForm(
    req: IncomingMessage,
    res: ServerResponse,
    bodyBytes?: number,
  ): Promise<{ account: SignedInAccount; fields: Record<string, string> } | undefined>;
  /** the account page's refusal page */
  problem(res: ServerResponse, status: number, message: string): void;
  /** records a credential added to or removed from the signed-in account, by that account */
  factorChanged(req: IncomingMessage, userId: string, type: 'factor.added' | 'factor.removed', factor: Factor): void;
}

/** What a factor's pages are made with. */
export interface FactorWebDeps {
  context: LoginContext;
  settings: FactorWebSettings;
  /** this factor's login limits (one budget for every factor; metrics count them by factor) */
  limits: SignInLimits;
  /** the sign-in page as every factor's entry on it makes it, with `hint` as the typed address */
  signInPage(hint: string): string;
  account: AccountPageHelpers;
}

/** The factor's step of a sign-in in progress, as its section on the factors page sees it. */
export interface FactorStep {
  userId: string;
  /** the account's e-mail address, when it has one */
  email: string | undefined;
  /**
   * whether the account may set this factor up on the way, when it lacks it (for its own rules, never for an
   * application's step-up)
   */
  enrolOnTheWay: boolean;
}

/** A part of a page: its HTML, and the script it needs (the pages' CSP allows only their own inline script). */
export interface PagePart {
  html: string;
  script?: string;
}

/** A factor's pages and routes. Each page lists the parts of every factor, in the registry's order. */
export interface FactorWeb {
  /** its routes: proving it, setting it up on the way, its account forms */
  routes: readonly Route[];
  /** on the sign-in page: a way to start signing in with it */
  signInEntry?(hint: string): PagePart;
  /**
   * on the factors page, while the sign-in still needs it: its form, or undefined when it has nothing to offer
   * (`req`: the page's request, whose database it reads)
   */
  factorsPageSection?(step: FactorStep, req: IncomingMessage): Promise<PagePart | undefined> | PagePart | undefined;
  /** on the account page: its credentials and the forms that change them (`req`: the page's request) */
  accountSection?(account: SignedInAccount, req: IncomingMessage): Promise<PagePart> | PagePart;
  /** what the account page says once one of its forms is done (`/account?done=<key>`): fixed texts by key */
  accountDone?: Readonly<Record<string, string>>;
}
