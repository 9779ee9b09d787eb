CREATE TABLE "deprecated_uses" (
	"coordinate" text NOT NULL,
	"client" text NOT NULL,
	"last_used_at" timestamp with time zone NOT NULL,
	CONSTRAINT "deprecated_uses_coordinate_client_pk" PRIMARY KEY("coordinate","client")
);
--> statement-breakpoint
CREATE TABLE "persisted_app_documents" (
	"app" text NOT NULL,
	"version" text NOT NULL,
	"hash" text NOT NULL,
	CONSTRAINT "persisted_app_documents_app_version_hash_pk" PRIMARY KEY("app","version","hash")
);
--> statement-breakpoint
CREATE TABLE "persisted_app_versions" (
	"app" text NOT NULL,
	"version" text NOT NULL,
	"imported_at" timestamp with time zone DEFAULT now() NOT NULL,
	"retired_at" timestamp with time zone,
	CONSTRAINT "persisted_app_versions_app_version_pk" PRIMARY KEY("app","version")
);
--> statement-breakpoint
ALTER TABLE "persisted_app_documents" ADD CONSTRAINT "persisted_app_documents_version_fk" FOREIGN KEY ("app","version") REFERENCES "public"."persisted_app_versions"("app","version") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "persisted_app_documents_hash_idx" ON "persisted_app_documents" USING btree ("hash");--> statement-breakpoint
-- Documents imported before apps were recorded belong to the app of imports without --app: `unnamed`, version `-`.
INSERT INTO "persisted_app_versions" ("app", "version")
  SELECT 'unnamed', '-' WHERE EXISTS (SELECT 1 FROM "persisted_operations" WHERE "source" = 'allowlist');--> statement-breakpoint
INSERT INTO "persisted_app_documents" ("app", "version", "hash")
  SELECT 'unnamed', '-', "hash" FROM "persisted_operations" WHERE "source" = 'allowlist';
