/**
 * The load of a chaos scenario: clients that follow HTTP semantics (fetch: keep-alive, honours
 * `Connection: close`), each sending one request after another, every outcome recorded with its timing.
 */
export interface Outcome {
  kind: string;
  startedAt: number;
  endedAt: number;
  /** HTTP status, or 0 when no response came */
  status: number;
  /** `extensions.code` / `code` of the answer's first error, or the network error's code */
  code: string | undefined;
  /** anything the request chose to remember (a created document's title, say) */
  note?: string;
}

export interface Probe {
  kind: string;
  send(): Promise<Response>;
  note?: string;
}

/** The code a failed fetch failed with: ECONNRESET, ECONNREFUSED, UND_ERR_SOCKET, ... */
export function networkErrorCode(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  return cause?.code ?? (error as { code?: string }).code ?? 'ERROR';
}

async function errorCodeOf(response: Response): Promise<string | undefined> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { code?: string; errors?: { extensions?: { code?: string } }[] };
    return body.errors?.[0]?.extensions?.code ?? body.code;
  } catch {
    return undefined;
  }
}

/** Runs one probe, never throwing. */
export async function record(probe: Probe): Promise<Outcome> {
  const startedAt = performance.now();
  try {
    const response = await probe.send();
    const code = await errorCodeOf(response);
    return { kind: probe.kind, startedAt, endedAt: performance.now(), status: response.status, code, note: probe.note };
  } catch (error) {
    return { kind: probe.kind, startedAt, endedAt: performance.now(), status: 0, code: networkErrorCode(error), note: probe.note };
  }
}

/**
 * `clients` loops, each taking its next probe from `next` until `running()` turns false (or `next` returns
 * undefined). Resolves with every outcome.
 */
export async function runLoad(clients: number, next: (client: number) => Probe | undefined, running: () => boolean): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (running()) {
        const probe = next(client);
        if (!probe) return;
        outcomes.push(await record(probe));
      }
    }),
  );
  return outcomes;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function graphqlProbe(
  kind: string,
  url: string,
  query: string,
  token?: string,
  variables?: Record<string, unknown>,
  note?: string,
): Probe {
  return {
    kind,
    note,
    send: () =>
      fetch(url, {
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
