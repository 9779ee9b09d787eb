import { stripVTControlCharacters } from 'node:util';

/** What oidc-provider prints (console.warn) when it is imported on a Node it does not support: below 22 LTS. */
const RUNTIME_WARNING = 'oidc-provider WARNING: Unsupported runtime';

type OidcProviderModule = typeof import('oidc-provider');

let loading: Promise<OidcProviderModule> | undefined;
/** the runtime warning oidc-provider gave as it loaded, held back from the output */
let heldWarning: string | undefined;

/**
 * oidc-provider, loaded on first use, so that CLI commands that never start the provider, and a server that stops
 * at a fault of its configuration or of its listen address, print nothing of it. Imported on Node 20 (the
 * development runtime; production runs Node 24) it warns "Unsupported runtime" on stderr: that line is held back, and
 * handed to `onRuntimeWarning` each time the provider is loaded, for the application to say in its own words.
 */
export async function loadOidcProvider(onRuntimeWarning?: (warning: string) => void): Promise<OidcProviderModule> {
  loading ??= (async () => {
    const warn = console.warn;
    const holdRuntimeWarning = (...args: unknown[]) => {
      const [first] = args;
      if (typeof first === 'string' && first.includes(RUNTIME_WARNING)) heldWarning = stripVTControlCharacters(first);
      else warn.apply(console, args);
    };
    console.warn = holdRuntimeWarning;
    try {
      return await import('oidc-provider');
    } finally {
      // (unless something else replaced it meanwhile: then that one stays)
      if (console.warn === holdRuntimeWarning) console.warn = warn;
    }
  })();
  const module = await loading;
  if (heldWarning !== undefined) onRuntimeWarning?.(heldWarning);
  return module;
}
