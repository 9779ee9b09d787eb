import { CodedError } from '@latchkey/auth/configuration';

/** A configuration that cannot run: its message names every variable at fault (code CONFIG_INVALID). */
export class ConfigError extends CodedError<'CONFIG_INVALID'> {
  constructor(message: string) {
    super('ConfigError', 'CONFIG_INVALID', message);
  }
}
