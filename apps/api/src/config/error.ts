/** A configuration that cannot run: its message names every variable at fault. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
