import { oidcModels, type Database } from '@latchkey/db';
import { and, eq, gt, isNull, lte, or, sql, type SQL } from '@latchkey/db';

/** A model's stored state as oidc-provider hands it over; kept verbatim (jsonb). */
export type OidcPayload = Record<string, unknown>;

/** The storage contract oidc-provider expects of one model's adapter (see its memory_adapter.js). */
export interface OidcAdapter {
  upsert(id: string, payload: OidcPayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<OidcPayload | undefined>;
  findByUid(uid: string): Promise<OidcPayload | undefined>;
  findByUserCode(userCode: string): Promise<OidcPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

/** What the provider's `adapter` option takes: it constructs one instance per model name. */
export type OidcAdapterClass = new (name: string) => OidcAdapter;

/**
 * Models whose rows die with their grant. Matches oidc-provider's own memory adapter: an Interaction's payload
 * also carries a `grantId` (the grant it extends), but revoking that grant must not kill the login in progress.
 */
const GRANTABLE_MODELS: ReadonlySet<string> = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

/**
 * Rows kept for a while after their model expires: a device polling with an expired device code must be told
 * `expired_token` (RFC 8628 3.5), which the provider can only say about a code it still finds (it judges the
 * expiry from the payload, not from the row).
 */
const OUTLIVES_EXPIRY_SECONDS: Partial<Record<string, number>> = { DeviceCode: 600 };

function stringField(payload: OidcPayload, key: string): string | null {
  const value = payload[key];
  return typeof value === 'string' ? value : null;
}

/** Rows whose expiry lies ahead (or that never expire). The provider re-checks `exp`, but must never see a dead row. */
function live(now: Date): SQL {
  return or(isNull(oidcModels.expiresAt), gt(oidcModels.expiresAt, now))!;
}

/** `consumed` is epoch seconds in oidc-provider (memory adapter: epochTime()). */
function withConsumed(row: { payload: OidcPayload; consumedAt: Date | null } | undefined): OidcPayload | undefined {
  if (!row) return undefined;
  if (!row.consumedAt) return row.payload;
  return { ...row.payload, consumed: Math.floor(row.consumedAt.getTime() / 1000) };
}

/**
 * oidc-provider storage on the application database, so sessions, grants and tokens survive restarts and are
 * shared by every instance. Returns a class because the provider calls `new Adapter(modelName)` once per model;
 * all models share the `oidc_models` table, told apart by the `model` column.
 */
/** An OAuth `invalid_request` in the shape oidc-provider's error handler exposes to the client. */
function nulRefused(): Error {
  return Object.assign(new Error('invalid_request'), {
    expose: true,
    statusCode: 400,
    status: 400,
    error_description: 'parameters must not contain NUL characters',
  });
}

interface DrizzleAdapterOptions {
  /** the clock models expire by (tests move it to see an expiry without waiting for one) @default Date.now */
  now?: () => number;
}

export function createDrizzleAdapter(db: Database, options: DrizzleAdapterOptions = {}): OidcAdapterClass {
  const now = options.now ?? Date.now;
  return class DrizzleOidcAdapter implements OidcAdapter {
    readonly model: string;

    constructor(name: string) {
      this.model = name;
    }

    /**
     * Replaces the whole row, as the memory adapter replaces the stored object: a re-saved model must not keep
     * stale lookup keys, expiry or consumption from its previous version. A consumption is kept only when the
     * payload itself carries `consumed` (models that read it back, e.g. DeviceCode, save it along).
     */
    async upsert(id: string, payload: OidcPayload, expiresIn?: number): Promise<void> {
      // jsonb cannot hold NUL characters; a request parameter carrying one is the client's mistake (400),
      // reported in oidc-provider's own error shape, not a failed write (500).
      if (JSON.stringify(payload).includes('\\u0000')) throw nulRefused();
      const consumed = payload['consumed'];
      const values = {
        payload,
        grantId: GRANTABLE_MODELS.has(this.model) ? stringField(payload, 'grantId') : null,
        uid: stringField(payload, 'uid'),
        userCode: stringField(payload, 'userCode'),
        // Without a finite expiresIn (e.g. registered clients) the row lives until destroyed.
        expiresAt:
          typeof expiresIn === 'number' && Number.isFinite(expiresIn)
            ? new Date(now() + (expiresIn + (OUTLIVES_EXPIRY_SECONDS[this.model] ?? 0)) * 1000)
            : null,
        consumedAt: typeof consumed === 'number' && Number.isFinite(consumed) ? new Date(consumed * 1000) : null,
      };
      await db
        .insert(oidcModels)
        .values({ model: this.model, id, ...values })
        .onConflictDoUpdate({ target: [oidcModels.model, oidcModels.id], set: values });
    }

    async find(id: string): Promise<OidcPayload | undefined> {
      return this.#findWhere(eq(oidcModels.id, id));
    }

    /** Only Session is looked up by uid; scoped to the model so another model's `uid` field can never match. */
    async findByUid(uid: string): Promise<OidcPayload | undefined> {
      return this.#findWhere(eq(oidcModels.uid, uid));
    }

    async findByUserCode(userCode: string): Promise<OidcPayload | undefined> {
      return this.#findWhere(eq(oidcModels.userCode, userCode));
    }

    /**
     * One UPDATE, no read first: the provider consumes codes and refresh tokens right after using them, and reuse
     * detection relies on the mark being durable, not on winning a read-modify-write race.
     */
    async consume(id: string): Promise<void> {
      await db
        .update(oidcModels)
        .set({ consumedAt: sql`now()` })
        .where(and(eq(oidcModels.model, this.model), eq(oidcModels.id, id)));
    }

    async destroy(id: string): Promise<void> {
      await db.delete(oidcModels).where(and(eq(oidcModels.model, this.model), eq(oidcModels.id, id)));
    }

    /**
     * Deletes the grant's rows of every grantable model, not only this adapter's: the provider calls this once per
     * token model (and only for grant types the client may use), and a revoked grant must leave no usable token.
     */
    async revokeByGrantId(grantId: string): Promise<void> {
      await db.delete(oidcModels).where(eq(oidcModels.grantId, grantId));
    }

    async #findWhere(condition: SQL): Promise<OidcPayload | undefined> {
      const [row] = await db
        .select({ payload: oidcModels.payload, consumedAt: oidcModels.consumedAt })
        .from(oidcModels)
        .where(and(eq(oidcModels.model, this.model), condition, live(new Date(now()))))
        .limit(1);
      return withConsumed(row);
    }
  };
}

/**
 * Removes expired rows; returns how many. Expired rows are already invisible to the provider, so this only
 * reclaims space: run it periodically. Consumed rows stay until they expire, since a consumed authorization
 * code or refresh token is what lets the provider detect its replay and revoke the grant.
 */
export async function purgeExpiredOidcModels(db: Database, now = new Date()): Promise<number> {
  const removed = await db.delete(oidcModels).where(lte(oidcModels.expiresAt, now)).returning({ id: oidcModels.id });
  return removed.length;
}
