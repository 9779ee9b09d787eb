export interface SetPasswordRequest {
  userId: string;
  /** the new password, as typed; it must not be logged or stored anywhere else */
  password: string;
  /** the account's e-mail address: the password may not equal it (compared trimmed, case-insensitively) */
  email: string;
}

export interface VerifyPasswordRequest {
  userId: string;
  /** the password, as typed */
  password: string;
}
