// What a test reads of an incremental (@defer / @stream) or event-stream answer.

/** The JSON parts of a multipart/mixed answer, in order. */
export function multipartParts(body: string): any[] {
  return [...body.matchAll(/\r\n\r\n(\{[\s\S]*?\})\r\n---/g)].map((match) => JSON.parse(match[1]!));
}

/** The `next` payloads of an SSE answer, in order, and whether it completed. */
export function ssePayloads(body: string): { payloads: any[]; completed: boolean } {
  const events = body.split('\n\n').filter((block) => block.startsWith('event:'));
  return {
    payloads: events.filter((block) => block.startsWith('event: next')).map((block) => JSON.parse(block.slice(block.indexOf('data:') + 5))),
    completed: events.some((block) => block.startsWith('event: complete')),
  };
}
