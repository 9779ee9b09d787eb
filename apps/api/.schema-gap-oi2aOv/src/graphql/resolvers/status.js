const STATUS = {};
/** Fields these resolvers answer without the database (they keep answering during an outage). */
export const statusDatabaseFree = ['Query.status', 'Status.service', 'Status.version', 'Status.time'];
export const statusResolvers = {
    Query: {
        status: () => STATUS,
    },
    Status: {
        service: (_source, _args, { app }) => app.service.name,
        version: (_source, _args, { app }) => app.service.version,
        time: () => new Date(),
    },
};
//# sourceMappingURL=status.js.map