CREATE TABLE "api_budgets" (
	"key" text PRIMARY KEY NOT NULL,
	"level" bigint NOT NULL,
	"refilled_at" timestamp with time zone NOT NULL
);
