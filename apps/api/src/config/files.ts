import { ConfigError } from './error.js';

/** A file named by `variable`, read once at start-up through the injected reader: a ConfigError naming it if it cannot be. */
export function readConfigFile(variable: string, file: string, readFile: ((path: string) => string) | undefined): string {
  if (!readFile) throw new ConfigError(`${variable} is set but files cannot be read here`);
  try {
    return readFile(file);
  } catch {
    throw new ConfigError(`invalid configuration:\n  ${variable}: cannot read ${file}`);
  }
}
