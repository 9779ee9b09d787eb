import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestMemo } from './request-memo.js';

/** How much of a refused body the server still reads, and for how long, before it closes the connection. */
export interface DiscardBound {
  /** bytes read and thrown away after the refusal */
  bytes: number;
  /** milliseconds from the refusal */
  ms: number;
}

/**
 * The bound on a refused body (docs/choices.md, "A refused body is discarded within a bound"): up to 64 MiB more,
 * for up to 10 seconds, whichever comes first. A declared body longer than that is not read at all.
 */
export const BODY_DISCARD_BOUND: Readonly<DiscardBound> = Object.freeze({ bytes: 64 * 1024 * 1024, ms: 10_000 });

/** The connections discarding a refused body: they carry their answer, and nothing is written to them after it. */
const discarding = requestMemo<boolean>('discarding a refused body');

/**
 * Whether `socket` carries a refused request whose body is being discarded: its answer is already out, so an error
 * found on it now (node's request timeout, say) closes it without a second answer.
 */
export const isDiscardingBody = (socket: object): boolean => discarding.get(socket) === true;

/**
 * Call before answering a request whose body is refused unread, or found too large while reading: the one place
 * that ends such a body. Closing the connection at once, with the client still sending, resets it under the
 * client: its write fails (EPIPE, ECONNRESET) before it reads the answer, and it reports a network failure
 * instead of the refusal. So, as a lingering close: the answer says `Connection: close`, the rest of the body is
 * read and thrown away (never kept) up to `bound`, and the connection closes once the body has ended and the
 * answer is out. Past the bound (or a declared length beyond it) the connection is cut. A slow sender is cut at
 * the bound's time, and node's request timeout still applies. A body that has all arrived is only thrown away.
 */
export function discardBody(req: IncomingMessage, res: ServerResponse, bound: DiscardBound = BODY_DISCARD_BOUND): void {
  if (req.destroyed || req.readableEnded) return;
  const length = req.headers['content-length'];
  if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return;
  // All of it has arrived: what a reader left unread is thrown away, and the connection may serve the next request.
  if (req.complete) return void req.resume();
  if (!res.headersSent) res.setHeader('connection', 'close');
  const socket = req.socket;
  // Beyond the bound, or already discarding: node closes the connection right after the answer.
  if (Number(length) > bound.bytes || discarding.get(socket)) return;
  discarding.set(socket, true);
  let discarded = 0;
  let answered = false;
  let done = false;
  // node ends a `Connection: close` exchange with `destroySoon()` once the answer is written: hold that until the
  // body has been read.
  socket.destroySoon = () => {
    answered = true;
  };
  const onData = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > bound.bytes) finish(true);
  };
  const onEnd = () => finish(false);
  const onGone = () => finish(true);
  const timer = setTimeout(onGone, bound.ms);
  timer.unref();
  function finish(cut: boolean): void {
    if (done) return;
    done = true;
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onGone);
    req.off('close', onGone);
    socket.off('close', onGone);
    discarding.set(socket, false);
    // The prototype's destroySoon again.
    delete (socket as Partial<typeof socket>).destroySoon;
    if (cut) socket.destroy();
    else if (answered) socket.destroySoon();
  }
  req.on('data', onData);
  req.once('end', onEnd);
  req.once('error', onGone);
  req.once('close', onGone);
  socket.once('close', onGone);
  // Paused by a reader that stopped at the limit: flow again (the data listener alone does not resume it then).
  req.resume();
}
