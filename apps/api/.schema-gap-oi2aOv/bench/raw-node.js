// Upper bound: the least work a Node HTTP server can do for the same request
// (read the body, JSON.parse it, write a constant JSON answer). Anything a
// GraphQL server does costs req/s relative to this.
// Contract with bench/run.ts: listen on PORT at 127.0.0.1, print `listening <url>`.
import { createServer } from 'node:http';
const answer = JSON.stringify({ data: { status: { version: '0.1.0' } } });
const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
        try {
            JSON.parse(Buffer.concat(chunks).toString('utf8'));
        }
        catch {
            res.writeHead(400, { 'content-type': 'application/json' });
            res.end('{"errors":[{"message":"invalid JSON body"}]}');
            return;
        }
        res.writeHead(200, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(answer),
        });
        res.end(answer);
    });
});
const port = Number(process.env.PORT ?? 4002);
server.listen(port, '127.0.0.1', () => {
    console.log(`listening http://127.0.0.1:${port}/graphql`);
});
//# sourceMappingURL=raw-node.js.map