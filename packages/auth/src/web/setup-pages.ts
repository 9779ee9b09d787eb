import type { TotpEnrolment } from '../totp/index.js';
import { escapeHtml, page } from './html.js';

/**
 * The set-up page of an authenticator app: the QR code (inline SVG: nothing is loaded from elsewhere), the
 * secret for typing, and the confirmation form. Shown once; the response is never stored (no-store).
 */
export function totpSetupPage(enrolment: TotpEnrolment, confirmAction: string, error = ''): string {
  // The secret in groups of four, as authenticator apps show it.
  const grouped = enrolment.secret.replace(/(.{4})/g, '$1 ').trim();
  return page(
    'Set up an authenticator app',
    `${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<p>Scan this code with your authenticator app, or type the key below into it.</p>
<figure id="totp-qr" aria-label="QR code for your authenticator app">${enrolment.qrSvg}</figure>
<p>Key: <code id="totp-secret">${escapeHtml(grouped)}</code></p>
<form method="post" action="${escapeHtml(confirmAction)}">
<label for="totp-code">The 6-digit code your app shows now</label>
<input id="totp-code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
<button type="submit">Confirm</button>
</form>`,
  );
}

/** The page that shows new recovery codes, once. */
export function recoveryCodesPage(codes: readonly string[], backTo: string): string {
  return page(
    'Your recovery codes',
    `<p>Each code signs you in once when your other ways are not at hand. Keep them somewhere safe: they are shown only now.</p>
<ul id="recovery-codes">${codes.map((code) => `<li><code>${escapeHtml(code)}</code></li>`).join('')}</ul>
<p><a href="${escapeHtml(backTo)}">Done</a></p>`,
  );
}

/** A new password and its confirmation (the account's e-mail as the username, for password managers). */
export function passwordSetupForm(action: string, email: string, button: string): string {
  return `<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="username" autocomplete="username" value="${escapeHtml(email)}">
<label for="new-password">New password (at least 12 characters)</label>
<input id="new-password" name="password" type="password" autocomplete="new-password" minlength="12" maxlength="256" required>
<label for="confirm-password">The same password again</label>
<input id="confirm-password" name="confirm" type="password" autocomplete="new-password" minlength="12" maxlength="256" required>
<button type="submit">${escapeHtml(button)}</button>
</form>`;
}
