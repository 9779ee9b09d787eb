/** A configuration that cannot run: its message names every variable at fault. */
export class ConfigError extends Error {
    name = 'ConfigError';
}
//# sourceMappingURL=error.js.map