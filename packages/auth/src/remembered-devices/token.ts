import { createHash, randomBytes } from 'node:crypto';

const DEVICE_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export const newDeviceToken = () => randomBytes(32).toString('base64url');
export const isDeviceTokenShaped = (value: unknown): value is string => typeof value === 'string' && DEVICE_TOKEN.test(value);
/** What the table keeps: the token is a bearer credential, so only its hash is stored. */
export const hashDeviceToken = (token: string) => createHash('sha256').update(token).digest('base64url');
