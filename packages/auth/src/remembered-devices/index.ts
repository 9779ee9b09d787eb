export { DEFAULT_REMEMBER_DAYS, rememberDevice } from './remember.js';
export { isRememberedDevice } from './recognise.js';
export { listRememberedDevices, revokeRememberedDevice } from './manage.js';
export type { RememberedDevice } from './manage.js';
