CREATE TABLE "audit_anchors" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"mac" text NOT NULL,
	"checkpoint" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_events" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"time" timestamp with time zone NOT NULL,
	"type" text NOT NULL,
	"actor" text,
	"subject" text,
	"address" text,
	"user_agent" text,
	"request_id" text,
	"details" jsonb NOT NULL,
	"mac" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "audit_events_subject_idx" ON "audit_events" USING btree ("subject","seq");--> statement-breakpoint
CREATE INDEX "audit_events_time_idx" ON "audit_events" USING btree ("time");