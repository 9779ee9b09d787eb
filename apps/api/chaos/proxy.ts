import { freePort } from '../test/support/browser-session.js';
import { NGINX, startNginx } from '../test/support/nginx.js';
import { NodeBrowser } from '../test/support/node-browser.js';
import { startServiceProcesses } from '../test/support/processes.js';
import { TestPki } from '../test/support/x509.js';

export interface ProxyFigures {
  scenario: string;
  /** wrong sign-in tokens one client sent (each with a forged X-Forwarded-For) before it was refused with 429 */
  attackerRefusedAfter: number;
  /** clients behind the same proxy refused because of it (in the past: every one of them) */
  neighboursLockedOut: number;
  /** discovery's authorization endpoint when a client sends X-Forwarded-Host: evil.test */
  discoveryUnderForgedHost: string;
  /** the instances that answered the attacker (nginx round robin) */
  instancesServed: number;
}

/**
 * Two instances behind nginx (docs/examples/nginx.conf: TLS, round robin) with TRUST_PROXY set to nginx's
 * address. One client at 127.0.0.2 sends wrong sign-in tokens claiming, in X-Forwarded-For, to be others; three
 * neighbours at 127.0.0.3-5 then try once each.
 */
export async function proxyScenario(): Promise<ProxyFigures> {
  if (!NGINX) throw new Error('the proxy scenario needs nginx (apt install nginx)');
  const pki = new TestPki();
  const authority = pki.authority('chaos-ca', '/CN=Latchkey Chaos CA');
  const certificate = pki.issue('proxy', authority, '/CN=localhost', ['DNS:localhost', 'IP:127.0.0.1']);
  const tlsPort = await freePort();
  const publicUrl = `https://localhost:${tlsPort}`;
  const processes = await startServiceProcesses(2, {
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
    PUBLIC_URL: publicUrl,
    TRUST_PROXY: '127.0.0.1',
  });
  const upstreams = processes.urls.map((url) => new URL(url).host) as [string, string];
  const nginx = await startNginx({
    tlsPort,
    httpPort: await freePort(),
    serverName: 'localhost',
    certFile: certificate.certFile,
    keyFile: certificate.keyFile,
    upstreams,
  });
  try {
    const browserAt = (from: string) =>
      new NodeBrowser(publicUrl, { connectTo: { host: '127.0.0.1', port: tlsPort }, from, ca: authority.cert });
    const wrongToken = (browser: NodeBrowser, forged?: string) =>
      browser.request('/login/ott', {
        form: { token: 'A'.repeat(43) },
        headers: { accept: 'application/json', ...(forged ? { 'x-forwarded-for': forged } : {}) },
      });
    const attacker = browserAt('127.0.0.2');
    const served = new Set<string>();
    let attempts = 0;
    for (; attempts < 50; attempts++) {
      const answer = await wrongToken(attacker, `127.0.0.${3 + (attempts % 3)}, 203.0.113.${attempts}`);
      served.add(await nginx.upstreamOf(String(answer.headers['x-request-id'])));
      if (answer.status === 429) break;
    }
    let neighboursLockedOut = 0;
    for (const neighbour of ['127.0.0.3', '127.0.0.4', '127.0.0.5'])
      if ((await wrongToken(browserAt(neighbour))).status === 429) neighboursLockedOut++;
    const discovery = await browserAt('127.0.0.6').request('/.well-known/openid-configuration', {
      headers: { 'x-forwarded-host': 'evil.test', host: 'evil.test' },
    });
    return {
      scenario: 'proxy: two instances behind nginx',
      attackerRefusedAfter: attempts,
      neighboursLockedOut,
      discoveryUnderForgedHost: String((discovery.json as { authorization_endpoint?: string } | undefined)?.authorization_endpoint),
      instancesServed: served.size,
    };
  } finally {
    await nginx.stop();
    await processes.stop();
  }
}
