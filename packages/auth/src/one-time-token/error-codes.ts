/** Why a submitted token signs nobody in; kept as data, never told apart to the client (one message). */
export const ONE_TIME_TOKEN_ERRORS = {
  INVALID: 'The sign-in link or code is invalid or has expired.',
} as const;
