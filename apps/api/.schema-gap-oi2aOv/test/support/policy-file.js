import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
/** A sign-in policy file as an operator writes it (AUTH_POLICY_FILE), in a temporary directory of its own. */
export function policyFile(policy) {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'latchkey-policy-')), 'auth-policy.json');
    writeFileSync(file, JSON.stringify(policy));
    return file;
}
//# sourceMappingURL=policy-file.js.map