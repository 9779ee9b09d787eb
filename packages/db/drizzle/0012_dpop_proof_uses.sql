CREATE TABLE "dpop_proof_uses" (
	"key" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "dpop_proof_uses_expires_idx" ON "dpop_proof_uses" USING btree ("expires_at");