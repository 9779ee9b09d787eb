import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nodeFlagsOfStartScript } from '../bench/harness/servers.js';

// The server's runtime flags (docs/operations.md, "Runtime flags") are part of how it is started, written in each
// start command: the repository's `pnpm start`, the api package's `start` (which the bench runs) and the production
// image's CMD. These hold the three to the same flags, and node to accepting them.

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');
const startScript = (manifest: string) => (JSON.parse(read(manifest)) as { scripts: { start: string } }).scripts.start;
/** The Dockerfile's exec-form CMD, without `node` and the script. */
function dockerFlags(): string[] {
  const cmd = /^CMD (\[.*\])$/m.exec(read('../../../Dockerfile'))?.[1];
  const words = JSON.parse(cmd ?? '[]') as string[];
  expect(words[0]).toBe('node');
  expect(words.at(-1)).toBe('dist/src/main.js');
  return words.slice(1, -1);
}

describe('the server is started with the same node flags everywhere', () => {
  it('pnpm start, the api package start script (the bench) and the image CMD give node the same flags', () => {
    const api = nodeFlagsOfStartScript(startScript('../package.json'));
    expect(api).toEqual(['--max-semi-space-size=64']);
    expect(nodeFlagsOfStartScript(startScript('../../../package.json'))).toEqual(api);
    expect(dockerFlags()).toEqual(api);
  });

  it('node accepts them, and under them the young generation grows past the default cap of Node 20 (2 x 16 MiB)', () => {
    const flags = nodeFlagsOfStartScript(startScript('../package.json'));
    // Allocation with a large share surviving: V8 grows the young generation to its maximum.
    const youngGenerationBytes = (nodeFlags: string[]) => {
      const probe = spawnSync(
        process.execPath,
        [
          ...nodeFlags,
          '-e',
          "let a=[];for(let i=0;i<4e6;i++){a.push({i});if(a.length>3e5)a=[]}console.log(require('v8').getHeapSpaceStatistics().find(s=>s.space_name==='new_space').space_size)",
        ],
        { encoding: 'utf8' },
      );
      expect(probe.status).toBe(0);
      return Number(probe.stdout.trim());
    };
    const MiB = 1024 * 1024;
    const without = youngGenerationBytes([]);
    const withFlags = youngGenerationBytes(flags);
    // Node 20's V8 stops at two semi-spaces of 16 MiB, so there the flag is what lets the young generation grow. Node
    // 24's goes further by default (64 or 128 MiB from one probe to the next, with the flag or without), so there the
    // flag changes nothing measurable and one probe cannot order the two. Either way the young generation passes Node
    // 20's cap and stays within the flag's.
    const major = Number(process.versions.node.split('.')[0]);
    if (major === 20) expect(without).toBeLessThanOrEqual(2 * 16 * MiB);
    if (major >= 24) expect(without).toBeGreaterThan(2 * 16 * MiB);
    expect(withFlags).toBeGreaterThan(2 * 16 * MiB);
    expect(withFlags).toBeLessThanOrEqual(2 * 64 * MiB);
  });

  it('reads only the flags before the script', () => {
    expect(nodeFlagsOfStartScript('node dist/src/main.js')).toEqual([]);
    expect(nodeFlagsOfStartScript('turbo run build >&2 && node --a=1 --b apps/api/dist/src/main.js --not-a-node-flag')).toEqual([
      '--a=1',
      '--b',
    ]);
    expect(() => nodeFlagsOfStartScript('tsx src/main.ts')).toThrow(/does not run node/);
  });
});
