CREATE TABLE "ended_sessions" (
	"session_uid" text PRIMARY KEY NOT NULL,
	"ended_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "session_activity" (
	"session_uid" text PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"client_id" text,
	"user_agent" text,
	"address" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "session_activity" ADD CONSTRAINT "session_activity_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ended_sessions_expires_idx" ON "ended_sessions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "session_activity_user_idx" ON "session_activity" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "oidc_models_session_account_idx" ON "oidc_models" USING btree (("payload" ->> 'accountId')) WHERE "oidc_models"."model" = 'Session';