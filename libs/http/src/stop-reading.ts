import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** How long the connection of a refused call stays open, unread, before it is closed. */
export const CLOSE_AFTER_MS = 1000;

const stopped = new WeakSet<IncomingMessage>();

/**
 * After a call is answered before its body was read to the end (refused: 401, 403, 404, 413, 415, 429,
 * a 400 decided on its headers, a 408): stops reading the body, so the client's sending stalls on TCP
 * backpressure, and closes the connection a moment later. Returns whether the connection closes, so
 * that the reply says `Connection: close` and the client does not send its next call on it.
 *
 * Closing at once, with the client still sending, would reset the connection and the client could lose
 * the reply; reading on would take in the rest of a body that was refused (by default Node reads it to
 * its end to keep the connection). Clients that stop sending on an early reply get the reply either way.
 */
export function stopReading(req: IncomingMessage): boolean {
  if (stopped.has(req)) return true;
  if (req.complete) return false;
  stopped.add(req);
  req.pause();
  // Node reads a request's unread body to its end after the reply unless someone has read from it:
  // take what is buffered (at most the stream's high-water mark), which counts as reading.
  req.read();
  const socket = req.socket as Socket & { destroySoon?: () => void };
  // On `Connection: close` Node ends and destroys the socket as soon as the reply is written: end it
  // (the reply, then FIN) and leave the destroying to the timer.
  socket.destroySoon = () => socket.end();
  const timer = setTimeout(() => socket.destroy(), CLOSE_AFTER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  return true;
}
