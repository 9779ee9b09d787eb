/** Listens on `host:port`; resolves with the listener's base URL (`scheme://host:port`, the port actually bound). */
export async function listen(server, port, host, scheme) {
    await new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
            server.off('error', reject);
            resolve();
        });
    });
    const actual = server.address().port;
    const name = host.includes(':') ? `[${host}]` : host;
    return `${scheme}://${name === '0.0.0.0' || name === '[::]' ? 'localhost' : name}:${actual}`;
}
//# sourceMappingURL=listen.js.map