import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
/** Debian's nginx (CI installs it when missing). */
export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((file) => existsSync(file));
/** The configuration an operator starts from, shipped with the repository. */
// (This file also runs compiled, from dist/test/support, for `pnpm chaos`.)
export const EXAMPLE_CONF = fileURLToPath(new URL(`${import.meta.url.includes('/dist/test/') ? '../' : ''}../../../../docs/examples/nginx.conf`, import.meta.url));
/**
 * docs/examples/nginx.conf with only ports, addresses, names and file paths replaced, plus what a foreground nginx
 * in a temporary directory needs (pid, temp paths, logs there; one worker, so round robin alternates strictly).
 * Each replacement must match the example exactly once: if the example changes shape, this fails instead of
 * silently testing something else.
 */
export function configFromExample(example, setup, dir) {
    let conf = example;
    const replace = (pattern, replacement, times = 1) => {
        const found = conf.match(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`))?.length ?? 0;
        if (found !== times)
            throw new Error(`docs/examples/nginx.conf: expected ${times} match(es) of ${pattern}, found ${found}`);
        conf = conf.replace(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`), replacement);
    };
    replace(/^user .+;$/m, `user ${userInfo().username};\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;`);
    replace(/^worker_processes .+;$/m, 'worker_processes 1;');
    replace(/^http \{$/m, `http {\n    client_body_temp_path ${dir}/body;\n    proxy_temp_path ${dir}/proxy;\n    fastcgi_temp_path ${dir}/fastcgi;\n    uwsgi_temp_path ${dir}/uwsgi;\n    scgi_temp_path ${dir}/scgi;`);
    replace(/access_log \/var\/log\/nginx\/latchkey\.access\.log/, `access_log ${dir}/access.log`);
    replace(/server 127\.0\.0\.1:4001 /, `server ${setup.upstreams[0]} `);
    replace(/server 127\.0\.0\.1:4002 /, `server ${setup.upstreams[1]} `);
    replace(/listen 80;/, `listen 127.0.0.1:${setup.httpPort};`);
    replace(/listen 443 ssl http2;/, `listen 127.0.0.1:${setup.tlsPort} ssl http2;`);
    replace(/server_name auth\.example\.com;/, `server_name ${setup.serverName};`, 2);
    replace(/ssl_certificate +\/etc\/ssl\/latchkey\/fullchain\.pem;/, `ssl_certificate ${setup.certFile};`);
    replace(/ssl_certificate_key +\/etc\/ssl\/latchkey\/privkey\.pem;/, `ssl_certificate_key ${setup.keyFile};`);
    return conf;
}
function accepts(port) {
    return new Promise((resolve) => {
        const socket = connect({ host: '127.0.0.1', port }, () => {
            socket.destroy();
            resolve(true);
        });
        socket.on('error', () => resolve(false));
    });
}
/** nginx in the foreground on the example's configuration (see configFromExample), started and ready. */
export async function startNginx(setup) {
    if (!NGINX)
        throw new Error('nginx is not installed');
    const dir = mkdtempSync(path.join(tmpdir(), 'latchkey-nginx-'));
    const confFile = path.join(dir, 'nginx.conf');
    writeFileSync(confFile, configFromExample(readFileSync(EXAMPLE_CONF, 'utf8'), setup, dir));
    const child = spawn(NGINX, ['-p', dir, '-c', confFile, '-e', path.join(dir, 'error.log'), '-g', 'daemon off;'], {
        stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk.toString('utf8')));
    const errorLog = () => (existsSync(path.join(dir, 'error.log')) ? readFileSync(path.join(dir, 'error.log'), 'utf8') : '');
    for (let i = 0;; i++) {
        if (child.exitCode !== null)
            throw new Error(`nginx exited with ${child.exitCode}: ${stderr}${errorLog()}`);
        if ((await accepts(setup.tlsPort)) && (await accepts(setup.httpPort)))
            break;
        if (i > 100)
            throw new Error(`nginx did not start: ${stderr}${errorLog()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const accessLog = () => (existsSync(path.join(dir, 'access.log')) ? readFileSync(path.join(dir, 'access.log'), 'utf8') : '');
    return {
        accessLog,
        async upstreamOf(requestId) {
            // nginx writes the line once the answer is sent, which can be just after the client has read it.
            for (let i = 0; i < 40; i++) {
                const upstream = new RegExp(`request_id=${requestId} upstream=(\\S+)`).exec(accessLog())?.[1];
                if (upstream)
                    return upstream;
                await new Promise((resolve) => setTimeout(resolve, 25));
            }
            throw new Error(`nginx logged no request ${requestId}`);
        },
        async stop() {
            if (child.exitCode === null) {
                const exited = new Promise((resolve) => child.once('exit', resolve));
                child.kill('SIGTERM');
                await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
                if (child.exitCode === null)
                    child.kill('SIGKILL');
            }
            rmSync(dir, { recursive: true, force: true });
        },
    };
}
//# sourceMappingURL=nginx.js.map