import { listOrganizationIdsOfUsers, listOrganizationsByIds, listUsersWithOrganizationIds, } from '@latchkey/db';
import DataLoader from 'dataloader';
function byId(rows, ids) {
    const found = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => found.get(id) ?? null);
}
function createRequestLoaders(db) {
    const organizationIdsOf = new DataLoader(async (userIds) => {
        const rows = await listOrganizationIdsOfUsers(db, userIds);
        const byUser = new Map();
        for (const row of rows)
            (byUser.get(row.userId) ?? byUser.set(row.userId, []).get(row.userId)).push(row.organizationId);
        return userIds.map((id) => byUser.get(id) ?? []);
    });
    return {
        organization: new DataLoader(async (ids) => byId(await listOrganizationsByIds(db, ids), ids)),
        // Users come with the ids of their organizations (one statement): the e-mail rule needs them for every owner.
        user: new DataLoader(async (ids) => {
            const rows = await listUsersWithOrganizationIds(db, ids);
            for (const { user, organizationIds } of rows)
                organizationIdsOf.prime(user.id, organizationIds);
            return byId(rows.map((row) => row.user), ids);
        }),
        organizationIdsOf,
    };
}
/**
 * One set of loaders per request (keyed by the request's context object), created on first use with the
 * request's own view of the database (its deadline).
 */
export function createLoaderFactory() {
    const byRequest = new WeakMap();
    return (request, db) => {
        let loaders = byRequest.get(request);
        if (!loaders)
            byRequest.set(request, (loaders = createRequestLoaders(db)));
        return loaders;
    };
}
//# sourceMappingURL=loaders.js.map