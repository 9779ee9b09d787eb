export {};
//# sourceMappingURL=resolvers.js.map