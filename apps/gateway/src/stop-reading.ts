import type { IncomingMessage } from 'node:http';

/** How long the connection of a refused upload stays open, unread, before it is closed. */
export const CLOSE_AFTER_MS = 1000;

/**
 * After an upload is refused: stops reading the body (the client's sending stalls on TCP
 * backpressure) and closes the connection a moment later. Closing at once, with the client still
 * sending, would reset the connection and the client would often lose the reply; reading on would
 * take in the rest of a body that was refused. Clients that stop sending on an early reply (curl,
 * browsers) get the reply either way.
 */
export function stopReading(req: IncomingMessage): void {
  if (req.complete) return;
  req.pause();
  // Node reads a request's unread body to its end after the reply unless someone has read from it:
  // take what is buffered (at most the stream's high-water mark), which counts as reading.
  req.read();
  const timer = setTimeout(() => req.socket.destroy(), CLOSE_AFTER_MS);
  timer.unref();
  req.once('close', () => clearTimeout(timer));
}
