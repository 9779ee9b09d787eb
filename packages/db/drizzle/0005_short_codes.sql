ALTER TABLE "one_time_tokens" ADD COLUMN "code_hash" text;--> statement-breakpoint
ALTER TABLE "one_time_tokens" ADD COLUMN "binding_hash" text;--> statement-breakpoint
ALTER TABLE "one_time_tokens" ADD COLUMN "code_attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "one_time_tokens_username_binding_idx" ON "one_time_tokens" USING btree ("username","binding_hash");