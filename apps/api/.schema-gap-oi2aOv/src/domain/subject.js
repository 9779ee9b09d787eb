export {};
//# sourceMappingURL=subject.js.map