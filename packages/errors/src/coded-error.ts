/**
 * A message table: one entry per code. A plain string is the message; a function builds it from the details the
 * thrower passes (a rule's name, a key's index), so the wording still lives here, next to the code, and never at
 * the throw site.
 */
export type MessageTable = Readonly<Record<string, string | ((details: never) => string)>>;

/** The codes whose message is a plain string, and those whose message is built from details. */
type PlainCodes<Table extends MessageTable> = { [Code in keyof Table]: Table[Code] extends string ? Code : never }[keyof Table] & string;
type TemplatedCodes<Table extends MessageTable> = Exclude<keyof Table & string, PlainCodes<Table>>;

/**
 * What the constructor takes: a code, then the details its message needs (only for a templated message), then
 * the error's options. A union of argument lists rather than a generic constructor: a class can extend it.
 */
type ConstructorArguments<Table extends MessageTable> =
  | [code: PlainCodes<Table>, options?: ErrorOptions]
  | {
      [Code in TemplatedCodes<Table>]: Table[Code] extends (details: infer Details) => string
        ? [code: Code, details: Details, options?: ErrorOptions]
        : never;
    }[TemplatedCodes<Table>];

/**
 * An error a caller tells apart by its stable `code` (for its logic and logs), never by its message: the
 * message is fixed per code, for people, and may be reworded. Every error class of the workspace extends it
 * (the published client's excepted: it carries the server's codes as they arrive).
 */
export class CodedError<Code extends string = string> extends Error {
  readonly code: Code;

  constructor(name: string, code: Code, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = name;
    this.code = code;
  }
}

export function isCodedError(error: unknown): error is CodedError {
  return error instanceof CodedError;
}

/** The class `definedErrors` returns: built from a code of its table (plus that code's details, if any). */
export interface DefinedErrorClass<Table extends MessageTable> {
  new (...args: ConstructorArguments<Table>): CodedError<keyof Table & string>;
  readonly prototype: CodedError<keyof Table & string>;
}

/**
 * The base class of one family of coded errors, kept as data: `name` is the error's name and `table` maps each
 * code to its message. Extend the result to give the family its own class (so callers can use `instanceof`):
 *
 *     export const PASSWORD_ERRORS = { PASSWORD_TOO_LONG: 'A password can have at most 256 characters.' } as const;
 *     export class PasswordError extends definedErrors('PasswordError', PASSWORD_ERRORS) {}
 *     throw new PasswordError('PASSWORD_TOO_LONG');
 */
export function definedErrors<const Table extends MessageTable>(name: string, table: Table): DefinedErrorClass<Table> {
  return class extends CodedError<keyof Table & string> {
    constructor(code: keyof Table & string, ...rest: unknown[]) {
      const entry = table[code] as string | ((details: unknown) => string);
      const templated = typeof entry === 'function';
      const options = (templated ? rest[1] : rest[0]) as ErrorOptions | undefined;
      super(name, code, templated ? entry(rest[0]) : entry, options);
    }
  } as unknown as DefinedErrorClass<Table>;
}
