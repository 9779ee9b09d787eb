import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** This test file's directory for the files below: made on first use, removed after the file's tests. */
let directory: string | undefined;
let written = 0;

/** A file of its own (a new name on every call) holding `text`, in this test file's temporary directory. */
export function temporaryFile(name: string, text: string): string {
  directory ??= mkdtempSync(path.join(tmpdir(), 'latchkey-policy-'));
  written += 1;
  const file = path.join(directory, `${written}-${name}`);
  writeFileSync(file, text);
  return file;
}

/** A sign-in policy file as an operator writes it (AUTH_POLICY_FILE). */
export function policyFile(policy: unknown): string {
  return temporaryFile('auth-policy.json', JSON.stringify(policy));
}

/** Removes what `temporaryFile` wrote (after every test file: `temporary-files.setup.ts`). */
export function removeTemporaryFiles(): void {
  if (directory) rmSync(directory, { recursive: true, force: true });
  directory = undefined;
}
