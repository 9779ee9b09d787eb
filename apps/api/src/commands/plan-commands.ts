// `pnpm latchkey plan --organization SLUG FREE|PRO`: sets an organization's plan, which sizes the budgets of its
// members (docs/graphql.md, "Budgets"). Loaded only when the command runs.
import { parseArgs } from 'node:util';
import { plan as planEnum, runMigrations, setOrganizationPlan, type Plan } from '@latchkey/db';
import type { Config } from '../config/load.js';
import { InvalidInputError, NotFoundError } from '../domain/errors.js';
import { requireSlug } from '../domain/validate.js';
import { withDatabase } from './database-commands.js';
import { didYouMean, UsageError } from './usage.js';

const PLANS: readonly Plan[] = planEnum.enumValues;

/** No organization has the slug: exit 4 like any missing record (`domainExitCode`), with the slug in the message. */
class UnknownOrganizationError extends NotFoundError {
  constructor(slug: string) {
    super();
    this.message = `plan: no organization "${slug}"`;
  }
}

/** The slug, checked for its form before the database is opened (a malformed one names no organization). */
function organizationOption(slug: string | undefined): string {
  if (slug === undefined || slug.trim() === '') throw new UsageError('plan: --organization SLUG is required');
  try {
    return requireSlug(slug.trim(), ['--organization']);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    throw new UsageError(`plan: --organization "${slug}" is not a slug (1-63 lower-case letters, digits or hyphens)`);
  }
}

/** The one positional word, exactly one of the plans; a near miss (`pro`) is pointed at the plan it resembles. */
function planArgument(words: string[]): Plan {
  const allowed = PLANS.join(' or ');
  if (words.length !== 1) throw new UsageError(`plan: give exactly one plan, ${allowed}`);
  const [word] = words as [string];
  if ((PLANS as readonly string[]).includes(word)) return word as Plan;
  const near = didYouMean(word.toUpperCase(), PLANS);
  throw new UsageError(`plan: "${word}" is not a plan (${allowed})${near ? `. Did you mean "${near}"?` : ''}`);
}

/**
 * Sets the plan and says what changed (`acme: FREE -> PRO`) or that nothing did. Running servers read plans for
 * at most a few seconds (the budgets' plan look-up), so callers' buckets are resized without a new token.
 * Like the CLI's other commands it records no audit event: the CLI has no audit writer (docs/audit.md).
 */
export async function planCommand(config: Config, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: { organization: { type: 'string' } }, allowPositionals: true, strict: true });
  const slug = organizationOption(values.organization);
  const plan = planArgument(positionals);
  const previous = await withDatabase(config, async (database) => {
    await runMigrations(database);
    return (await setOrganizationPlan(database.db, slug, plan))?.previous;
  });
  if (previous === undefined) throw new UnknownOrganizationError(slug);
  process.stderr.write(previous === plan ? `${slug}: already ${plan} (unchanged)\n` : `${slug}: ${previous} -> ${plan}\n`);
}
