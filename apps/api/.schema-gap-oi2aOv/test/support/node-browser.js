import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { rememberCookie } from './browser-session.js';
/**
 * One browser's cookie jar over node:http(s), which, unlike fetch, can send from a chosen local address, trust a
 * test authority and send any Host header. Redirects are not followed, so each hop can be inspected; cookie paths
 * are ignored (every cookie goes everywhere), which only sends more, never less.
 */
export class NodeBrowser {
    base;
    options;
    cookies = new Map();
    /** every Set-Cookie line this browser received */
    setCookies = [];
    constructor(base, options = {}) {
        this.base = base;
        this.options = options;
    }
    /** Sends a request and hands back the response unread (an event stream, say). */
    open(target, init = {}) {
        const url = new URL(target, this.base);
        const headers = { host: url.host, accept: 'text/html' };
        if (this.cookies.size > 0)
            headers['cookie'] = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
        let body = init.body;
        if (init.form) {
            headers['content-type'] = 'application/x-www-form-urlencoded';
            body = new URLSearchParams(init.form).toString();
        }
        else if (init.json !== undefined) {
            headers['content-type'] = 'application/json';
            headers['accept'] = 'application/json';
            body = JSON.stringify(init.json);
        }
        if (init.form || init.json !== undefined)
            headers['origin'] = url.origin;
        if (body !== undefined)
            headers['content-length'] = String(Buffer.byteLength(body));
        Object.assign(headers, init.headers);
        const https = url.protocol === 'https:';
        const options = {
            host: this.options.connectTo?.host ?? url.hostname,
            port: this.options.connectTo?.port ?? Number(url.port || (https ? 443 : 80)),
            path: `${url.pathname}${url.search}`,
            method: init.method ?? (body !== undefined ? 'POST' : 'GET'),
            headers,
            localAddress: init.from ?? this.options.from,
            agent: false,
        };
        return new Promise((resolve, reject) => {
            const onResponse = (res) => {
                for (const line of res.headers['set-cookie'] ?? [])
                    this.remember(line);
                resolve(res);
            };
            const req = https
                ? httpsRequest({
                    ...options,
                    servername: url.hostname,
                    ca: this.options.ca,
                    ...(init.cert ? { cert: init.cert.cert, key: init.cert.key } : {}),
                }, onResponse)
                : httpRequest(options, onResponse);
            req.on('error', reject);
            req.end(body);
        });
    }
    async request(target, init = {}) {
        const res = await this.open(target, init);
        const chunks = [];
        for await (const chunk of res)
            chunks.push(chunk);
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try {
            json = JSON.parse(text);
        }
        catch {
            json = undefined;
        }
        return {
            status: res.statusCode,
            headers: res.headers,
            setCookies: res.headers['set-cookie'] ?? [],
            text,
            json,
            location: res.headers.location,
        };
    }
    remember(line) {
        this.setCookies.push(line);
        rememberCookie(this.cookies, line);
    }
}
//# sourceMappingURL=node-browser.js.map