import { hash, parseOptions, type Algorithm, type Options, type Version } from '@node-rs/argon2';
import { randomToken } from '../secrets/index.js';

// The library's enums are `const enum`s in an ambient declaration, which isolatedModules cannot read as
// values: their numbers, typed by the enums.
const ARGON2ID = 2 as Algorithm.Argon2id;
const VERSION_0X13 = 1 as Version.V0x13;

/**
 * argon2id with OWASP's minimum recommendation (Password Storage Cheat Sheet): 19 MiB of memory (19456 KiB),
 * 2 passes, 1 lane. Spelled out rather than left to the library's defaults, so that a change of those
 * defaults cannot weaken (or silently change) what is stored. 32-byte output, 16-byte random salt.
 */
export const ARGON2_OPTIONS = {
  algorithm: ARGON2ID,
  version: VERSION_0X13,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
  outputLen: 32,
} as const satisfies Options;

/** The PHC string of a (normalized) password: `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`. */
export function hashPassword(normalizedPassword: string): Promise<string> {
  return hash(normalizedPassword, ARGON2_OPTIONS);
}

/**
 * Whether a stored PHC string was made with parameters weaker than (or other than) the current ones, so that
 * it should be replaced after the next successful verification. An unparsable string counts as weaker.
 */
export function needsRehash(phc: string): boolean {
  try {
    const stored = parseOptions(phc);
    return (
      stored.algorithm !== ARGON2_OPTIONS.algorithm ||
      stored.version !== ARGON2_OPTIONS.version ||
      stored.memoryCost < ARGON2_OPTIONS.memoryCost ||
      stored.timeCost < ARGON2_OPTIONS.timeCost ||
      stored.outputLen < ARGON2_OPTIONS.outputLen ||
      stored.saltLen < 16
    );
  } catch {
    return true;
  }
}

let dummy: Promise<string> | undefined;

/**
 * A hash of a random password nobody knows, made once (on first use) with the current parameters: verifying
 * against it costs what verifying a real password costs, so an account without a password takes as long
 * to refuse as a wrong password does.
 */
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomToken());
  return dummy;
}
