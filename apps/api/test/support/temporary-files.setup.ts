import { afterAll } from 'vitest';
import { removeTemporaryFiles } from './policy-file.js';

// A setup file runs before each test file, so this hook runs after each file's tests: files written there by
// `temporaryFile` (sign-in policies and the like) do not outlive the run, whichever test wrote them.
afterAll(removeTemporaryFiles);
