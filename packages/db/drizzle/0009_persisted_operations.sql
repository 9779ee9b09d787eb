CREATE TABLE "persisted_operations" (
	"hash" text PRIMARY KEY NOT NULL,
	"query" text NOT NULL,
	"source" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "persisted_operations_hash_check" CHECK ("persisted_operations"."hash" ~ '^[0-9a-f]{64}$'),
	CONSTRAINT "persisted_operations_source_check" CHECK ("persisted_operations"."source" in ('apq', 'allowlist'))
);
--> statement-breakpoint
CREATE INDEX "persisted_operations_lru_idx" ON "persisted_operations" USING btree ("source","last_used_at");