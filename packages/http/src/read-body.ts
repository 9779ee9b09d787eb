import type { IncomingMessage } from 'node:http';
import { CodedError } from '@latchkey/errors';

/** A body past its limit (code PAYLOAD_TOO_LARGE): the edge answers 413. */
export class BodyTooLargeError extends CodedError<'PAYLOAD_TOO_LARGE'> {
  constructor(message = 'The request body is too large.') {
    super('BodyTooLargeError', 'PAYLOAD_TOO_LARGE', message);
  }
}

/**
 * Reads the whole body, refusing more than `limit` bytes. node:http never delivers more than a declared
 * Content-Length, so the header check in the caller covers most requests; this counts chunked ones.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        reject(new BodyTooLargeError());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
