import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
/** The API's version from its package.json, found by walking up (works from src/ and from dist/src/). */
export function readVersion() {
    let dir = path.dirname(fileURLToPath(import.meta.url));
    for (let i = 0; i < 5; i++) {
        try {
            const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
            if (pkg.name === '@latchkey/api' && pkg.version)
                return pkg.version;
        }
        catch {
            // keep walking
        }
        dir = path.dirname(dir);
    }
    return '0.0.0';
}
//# sourceMappingURL=version.js.map