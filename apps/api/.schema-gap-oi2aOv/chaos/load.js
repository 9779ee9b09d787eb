/** The code a failed fetch failed with: ECONNRESET, ECONNREFUSED, UND_ERR_SOCKET, ... */
export function networkErrorCode(error) {
    const cause = error.cause;
    return cause?.code ?? error.code ?? 'ERROR';
}
async function errorCodeOf(response) {
    const text = await response.text();
    try {
        const body = JSON.parse(text);
        return body.errors?.[0]?.extensions?.code ?? body.code;
    }
    catch {
        return undefined;
    }
}
/** Runs one probe, never throwing. */
export async function record(probe) {
    const startedAt = performance.now();
    try {
        const response = await probe.send();
        const code = await errorCodeOf(response);
        return { kind: probe.kind, startedAt, endedAt: performance.now(), status: response.status, code, note: probe.note };
    }
    catch (error) {
        return { kind: probe.kind, startedAt, endedAt: performance.now(), status: 0, code: networkErrorCode(error), note: probe.note };
    }
}
/**
 * `clients` loops, each taking its next probe from `next` until `running()` turns false (or `next` returns
 * undefined). Resolves with every outcome.
 */
export async function runLoad(clients, next, running) {
    const outcomes = [];
    await Promise.all(Array.from({ length: clients }, async (_, client) => {
        while (running()) {
            const probe = next(client);
            if (!probe)
                return;
            outcomes.push(await record(probe));
        }
    }));
    return outcomes;
}
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export function graphqlProbe(kind, url, query, token, variables, note) {
    return {
        kind,
        note,
        send: () => fetch(url, {
            method: 'POST',
            headers: {
                'content-type': 'application/json',
                accept: 'application/graphql-response+json',
                ...(token ? { authorization: `Bearer ${token}` } : {}),
            },
            body: JSON.stringify({ query, variables }),
        }),
    };
}
//# sourceMappingURL=load.js.map