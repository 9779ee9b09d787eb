export {};
//# sourceMappingURL=document-events.js.map