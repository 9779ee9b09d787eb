import { createServer } from 'node:net';
/** A free TCP port on 127.0.0.1 (the issuer URL must name the port the service will listen on). */
export function freePort() {
    return new Promise((resolve, reject) => {
        const server = createServer();
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => {
            const address = server.address();
            const port = typeof address === 'object' && address ? address.port : 0;
            server.close(() => resolve(port));
        });
    });
}
/** Applies one Set-Cookie line to a cookie jar (name -> value): set, or deleted when empty or expired. */
export function rememberCookie(cookies, line) {
    const [pair, ...attributes] = line.split(';');
    const index = pair.indexOf('=');
    const name = pair.slice(0, index).trim();
    const value = pair.slice(index + 1).trim();
    const expired = attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute) || /^\s*expires=thu, 01 jan 1970/i.test(attribute));
    if (expired || value === '')
        cookies.delete(name);
    else
        cookies.set(name, value);
}
/**
 * One browser's cookies over plain fetch: follows nothing by itself (redirect: manual) so each hop of a login
 * can be inspected. Paths are ignored (every cookie goes everywhere), which only sends more, never less.
 */
export class BrowserSession {
    base;
    cookies = new Map();
    constructor(base) {
        this.base = base;
    }
    async request(path, init = {}) {
        const url = path.startsWith('http') ? path : `${this.base}${path}`;
        const headers = { accept: 'text/html', ...init.headers };
        if (this.cookies.size > 0)
            headers['cookie'] = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
        let body;
        if (init.form) {
            headers['content-type'] = 'application/x-www-form-urlencoded';
            headers['origin'] ??= new URL(this.base).origin;
            body = new URLSearchParams(init.form).toString();
        }
        else if (init.json !== undefined) {
            headers['content-type'] = 'application/json';
            body = JSON.stringify(init.json);
        }
        const response = await fetch(url, { method: init.method ?? (body !== undefined ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
        for (const line of response.headers.getSetCookie())
            rememberCookie(this.cookies, line);
        const text = await response.text();
        return { status: response.status, headers: response.headers, text, location: response.headers.get('location') };
    }
}
//# sourceMappingURL=browser-session.js.map