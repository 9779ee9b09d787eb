import { defineConfig } from 'drizzle-kit';

// Only `generate` is used (it diffs the schema against ./drizzle/meta and needs no
// database), so no dbCredentials here: applying migrations is runMigrations()' job.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/schema/index.ts',
  out: './drizzle',
});
