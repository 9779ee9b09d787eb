import { startServiceProcesses } from '../test/support/processes.js';
import { graphqlProbe, runLoad, sleep } from './load.js';
/**
 * A deploy: SIGTERM to an instance under keep-alive write load (8 clients creating documents). With
 * `balancer`, the clients stop starting requests one second after `/readyz` turned 503 (a load balancer
 * taking the instance out); without it they keep going until the listener refuses them.
 */
export async function shutdownScenario(balancer) {
    const shutdownDelayMs = 2000;
    const processes = await startServiceProcesses(1, {
        NODE_ENV: 'production',
        LOG_LEVEL: 'error',
        SHUTDOWN_DELAY: `${shutdownDelayMs}ms`,
        SHUTDOWN_TIMEOUT: '10s',
    });
    try {
        const [base] = processes.urls;
        const token = await processes.token(await processes.userIdOf('alice@acme.test'));
        const prefix = `chaos-${Date.now()}`;
        let sequence = 0;
        let inRotation = true;
        const mutation = 'mutation ($t: String!) { createDocument(input: { organization: "acme", title: $t }) { document { id } } }';
        const load = runLoad(8, () => {
            const title = `${prefix}-${sequence++}`;
            return graphqlProbe('write', `${base}/graphql`, mutation, token, { t: title }, title);
        }, () => inRotation);
        await sleep(2000);
        const exited = processes.exited(0);
        processes.children[0].kill('SIGTERM');
        if (balancer) {
            while ((await fetch(`${base}/readyz`)).status === 200)
                await sleep(20);
            await sleep(1000);
            inRotation = false;
        }
        const { code, ms } = await exited;
        inRotation = false;
        const outcomes = await load;
        const committed = await processes.documentTitles(prefix);
        const answered = new Set(outcomes.filter((o) => o.status === 200 && !o.code).map((o) => o.note));
        return {
            scenario: balancer ? 'shutdown: balancer honours /readyz' : 'shutdown: clients ignore readiness',
            shutdownDelayMs,
            writesSent: outcomes.length,
            connectionResets: outcomes.filter((o) => o.code === 'ECONNRESET' || o.code === 'UND_ERR_SOCKET' || o.code === 'EPIPE').length,
            refused: outcomes.filter((o) => o.code === 'ECONNREFUSED').length,
            committedWithoutAnswer: committed.filter((title) => !answered.has(title)).length,
            exitCode: code,
            exitSeconds: Math.round(ms / 10) / 100,
        };
    }
    finally {
        await processes.stop();
    }
}
//# sourceMappingURL=shutdown.js.map