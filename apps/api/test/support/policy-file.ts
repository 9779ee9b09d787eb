import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { testTempDir } from '@latchkey/db/testing';

/**
 * A file holding `text`, in a temporary directory of its own under the test run's directory (removed when the run
 * ends, with everything else the run wrote there).
 */
export function temporaryFile(name: string, text: string): string {
  const file = path.join(testTempDir('policy'), name);
  writeFileSync(file, text);
  return file;
}

/** A sign-in policy file as an operator writes it (AUTH_POLICY_FILE). */
export function policyFile(policy: unknown): string {
  return temporaryFile('auth-policy.json', JSON.stringify(policy));
}
