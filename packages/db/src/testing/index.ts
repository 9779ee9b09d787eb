// Helpers for the tests of packages that use the database (`@latchkey/db/testing`); never imported by
// production code.
export { createOwnDatabase, openBackendPids, openOwnDatabase, recreateDatabase } from './own-database.js';
export { countStatements, statementsDuring } from './statements.js';
export { startTcpProxy, type TcpProxy } from './tcp-proxy.js';
export { onPglite, onPostgres, redisForTests, runsHere } from './needs-tool.js';
export { seedPgliteDataDir, testTempDir } from './template.js';
export { promotedByYoungCollections } from './young-collections.js';
export { privateClusterUnavailable, startPrivateCluster, type PrivateCluster } from './private-cluster.js';
