import { CodedError } from '@latchkey/errors';

/** A configuration that cannot run: its message names every variable at fault (code CONFIG_INVALID). */
export class ConfigError extends CodedError<'CONFIG_INVALID'> {
  constructor(message: string) {
    super('ConfigError', 'CONFIG_INVALID', message);
  }
}
