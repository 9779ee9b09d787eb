/**
 * The login limits, counted: every refusal under its limit's name, and, for the limits handed to one sign-in
 * method's routes, that method's attempts, successes, failures and lockouts. The decisions are the store's own;
 * nothing here changes what a caller is told.
 */
export function countLoginLimits(limits, metrics) {
    const refusalCounter = (limit) => (decision) => {
        if (!decision.allowed)
            metrics.refused(limit);
        return decision;
    };
    const signInRefused = refusalCounter('sign-in');
    const generationRefused = refusalCounter('token-generation');
    const counted = {
        ...limits,
        generate: (ip, username) => limits.generate(ip, username).then(generationRefused),
        consumeAttempt: (ip) => limits.consumeAttempt(ip).then(signInRefused),
        window(name, limit) {
            const take = limits.window(name, limit);
            const refused = refusalCounter(name);
            return (ip) => take(ip).then(refused);
        },
    };
    const byMethod = new Map();
    /** The limits for the routes of one sign-in method (one object per method, made once). */
    function forMethod(method) {
        let bound = byMethod.get(method);
        if (!bound) {
            const counters = metrics.signIn(method);
            const afterFailure = (outcome) => {
                if (outcome === 'locked-out')
                    counters.lockout();
                return outcome;
            };
            bound = {
                ...counted,
                consumeAttempt(ip) {
                    counters.attempt();
                    return counted.consumeAttempt(ip);
                },
                consumeFailed(ip) {
                    counters.failure();
                    return counted.consumeFailed(ip).then(afterFailure);
                },
                consumeSucceeded(ip) {
                    counters.success();
                    return counted.consumeSucceeded(ip);
                },
            };
            byMethod.set(method, bound);
        }
        return bound;
    }
    return { limits: counted, forMethod };
}
//# sourceMappingURL=counted-login-limits.js.map