import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Database } from '@latchkey/db';
import { seeOther, type Route } from '@latchkey/http';
import { listRememberedDevices, revokeRememberedDevice } from '../remembered-devices/index.js';
import type { LoginScopes } from './request-scope.js';
import type { AccountPageHelpers } from './factor-module.js';
import { escapeHtml, when } from './html.js';

/** The browsers remembered for the account (this one marked, by its `deviceToken`), each with a form that forgets it. */
export async function rememberedBrowsersSection(db: Database, userId: string, deviceToken: string | undefined): Promise<string> {
  const devices = await listRememberedDevices(db, userId, deviceToken);
  return `<h2>Remembered browsers</h2>
${
  devices.length
    ? `<ul id="devices">${devices
        .map(
          (
            device,
          ) => `<li><strong>${escapeHtml(device.label)}</strong>${device.current ? ' (this browser)' : ''} <small>since ${when(device.createdAt)}${device.lastUsedAt ? `, last used ${when(device.lastUsedAt)}` : ''}, until ${when(device.expiresAt)}</small>
<form method="post" action="/account/devices/forget"><input type="hidden" name="id" value="${escapeHtml(device.id)}"><button type="submit">Forget${device.current ? ' this browser' : ''}</button></form></li>`,
        )
        .join('\n')}</ul>`
    : '<p>No browser is remembered. A remembered browser skips the second step of signing in, never the first.</p>'
}`;
}

/** The account page's form that forgets one of the browsers remembered for the account (`id`). */
export function forgetBrowserForm({ dbOf }: Pick<LoginScopes, 'dbOf'>, { credentialForm, problem }: AccountPageHelpers): Route {
  async function forget(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await credentialForm(req, res);
    if (!form) return;
    if (!(await revokeRememberedDevice(dbOf(req), form.account.userId, form.fields['id'] ?? '')))
      return problem(res, 404, 'This browser is not remembered for your account.');
    seeOther(res, '/account?done=device-forgotten');
  }
  return { path: '/account/devices/forget', methods: ['POST'], handler: forget };
}
