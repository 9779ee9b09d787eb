CREATE TABLE "document_events" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"event" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "document_events_purged" (
	"id" smallint PRIMARY KEY NOT NULL,
	"through_seq" bigint NOT NULL,
	CONSTRAINT "document_events_purged_one_row_check" CHECK ("document_events_purged"."id" = 1)
);
