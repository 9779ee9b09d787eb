import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  check,
  index,
  jsonb,
  pgEnum,
  pgTable,
  smallint,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { organizations, users } from './accounts.js';

// Documents, and the outbox of their events.

export const documentStatus = pgEnum('document_status', ['DRAFT', 'PUBLISHED', 'ARCHIVED']);

export const documents = pgTable(
  'documents',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    ownerId: uuid('owner_id')
      .notNull()
      .references(() => users.id),
    title: text('title').notNull(),
    body: text('body').notNull().default(''),
    status: documentStatus('status').notNull().default('DRAFT'),
    legalHold: boolean('legal_hold').notNull().default(false),
    /** before this instant the document is invisible to VIEWERs */
    embargoUntil: timestamp('embargo_until', { withTimezone: true, mode: 'date' }),
    internalNotes: text('internal_notes'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' })
      .notNull()
      .defaultNow()
      .$onUpdateFn(() => sql`now()`),
  },
  (t) => [
    // "title taken" is a business failure reported as payload data; the index makes it race-free.
    uniqueIndex('documents_organization_title_key').on(t.organizationId, t.title),
    // keyset pagination within an organization: (created_at, id)
    index('documents_organization_created_idx').on(t.organizationId, t.createdAt, t.id),
    // keyset pagination across organizations (a super admin's list, or any list without an organization): without it,
    // a page of 20 sorted every document (about 45 ms at 100,000 documents); with it, a page walks the index backwards.
    index('documents_created_idx').on(t.createdAt, t.id),
    check('documents_title_length_check', sql`char_length(${t.title}) between 1 and 200`),
  ],
);

export type DocumentRow = typeof documents.$inferSelect;
export type NewDocumentRow = typeof documents.$inferInsert;
export type DocumentStatus = (typeof documentStatus.enumValues)[number];

/**
 * The outbox of document events: one row per committed change to a document, written in the change's
 * own transaction, so it is the only record of the event (NOTIFY and Redis merely wake the instances, which read
 * this table in `seq` order). `event` holds the ids and the few attributes the visibility rule needs, never
 * content. `created_at` is the clock at insert (close to the commit, unlike `now()`); rows older than the
 * retention are purged.
 */
export const documentEvents = pgTable('document_events', {
  seq: bigserial('seq', { mode: 'number' }).primaryKey(),
  event: jsonb('event').$type<Record<string, unknown>>().notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().default(sql`clock_timestamp()`),
});
export type DocumentEventRow = typeof documentEvents.$inferSelect;

/**
 * One row (id 1, written by the first purge): every `document_events` row up to `through_seq` may have been
 * purged. A reader behind it cannot tell a purged event from a rolled-back change, so it knows it lost events.
 */
export const documentEventsPurged = pgTable(
  'document_events_purged',
  {
    id: smallint('id').primaryKey(),
    throughSeq: bigint('through_seq', { mode: 'number' }).notNull(),
  },
  (t) => [check('document_events_purged_one_row_check', sql`${t.id} = 1`)],
);
