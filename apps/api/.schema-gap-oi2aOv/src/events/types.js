const KINDS = new Set(['CREATED', 'UPDATED', 'PUBLISHED', 'ARCHIVED', 'DELETED', 'LEGAL_HOLD_CHANGED']);
const STATUSES = new Set(['DRAFT', 'PUBLISHED', 'ARCHIVED']);
/** An event read back from the outbox (a row anyone with write access to the table could have written): checked, else undefined. */
export function parseDocumentEvent(text) {
    let value;
    try {
        value = JSON.parse(text);
    }
    catch {
        return undefined;
    }
    if (typeof value !== 'object' || value === null)
        return undefined;
    const event = value;
    const strings = ['id', 'documentId', 'organizationId', 'ownerId'].every((key) => typeof event[key] === 'string' && event[key].length <= 100);
    if (!strings || !KINDS.has(event['kind']) || !STATUSES.has(event['status']))
        return undefined;
    if (event['embargoUntil'] !== null && typeof event['embargoUntil'] !== 'string')
        return undefined;
    if (typeof event['at'] !== 'number')
        return undefined;
    return event;
}
//# sourceMappingURL=types.js.map