import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { unavailable } from '@gi/domain';
import { writeRawProblem } from './raw-problem';
import { CLOSE_AFTER_MS } from './stop-reading';

export interface ConnectionLimits {
  /** Connections held at once; past it a new one is answered 503 and closed. */
  maxConnections: number;
  /** Time a new connection may stay silent (not one byte of a request) before it is closed. */
  firstRequestMs: number;
}

export interface ConnectionGuardOptions extends ConnectionLimits {
  /** Told of each connection refused (a metric). */
  onRefused?: () => void;
  /** Writes the refusal log line, at most once per REFUSAL_LOG_EVERY_MS with the count since the last. */
  logRefused?: (fields: { refused: number; maxConnections: number }) => void;
}

/** Refusals are logged at most this often: a flood of them costs one line, not one each. */
export const REFUSAL_LOG_EVERY_MS = 10_000;

/** What the guard knows of a connection it holds. */
interface Held {
  openedAt: number;
  /** Its requests being answered. */
  busy: number;
  /** What it had sent when its last reply ended (0 before any): more since means a request is arriving. */
  bytesWhenIdle: number;
}

/** A new connection is not taken for idle (its request may be on its way) for this long. */
const FRESH_GRACE_MS = 1000;

/**
 * Keeps a server within `maxConnections`, so it never reaches the process's limit on open files (where
 * Node can no longer accept a connection, not even to answer it, and nothing is logged). A connection
 * over the limit is first made room for by closing the idle ones: keep-alive connections between
 * requests, and new ones that sent nothing for a second. If none was idle it is answered 503 with
 * Retry-After and closed, logged and counted. A new connection that sends nothing within
 * `firstRequestMs` is closed.
 *
 * Works by taking over the server's own `connection` listener: a refused connection never gets an HTTP
 * parser, so no request of it ever reaches the app. Returns how many connections are open.
 */
export function guardConnections(server: Server, options: ConnectionGuardOptions): { open(): number } {
  const accept = server.listeners('connection');
  if (accept.length !== 1) throw new Error('guardConnections needs the HTTP server as Node made it, with its one connection listener.');
  const [httpConnection] = accept as Array<(socket: Socket) => void>;
  server.removeListener('connection', httpConnection);
  const held = new Map<Socket, Held>();
  const live = () => {
    let count = 0;
    for (const socket of held.keys()) if (!socket.destroyed) count++;
    return count;
  };
  /** Closes every idle connection: those can be opened again at no loss, the new one cannot wait. */
  const closeIdle = () => {
    const now = performance.now();
    for (const [socket, state] of held) {
      const quiet = state.busy === 0 && socket.bytesRead === state.bytesWhenIdle;
      if (quiet && (state.bytesWhenIdle > 0 || now - state.openedAt >= FRESH_GRACE_MS)) socket.destroy();
    }
  };
  const logRefused = throttledReport((refused) => options.logRefused?.({ refused, maxConnections: options.maxConnections }), REFUSAL_LOG_EVERY_MS);

  server.on('connection', (socket: Socket) => {
    if (held.size >= options.maxConnections && live() >= options.maxConnections) {
      closeIdle();
      if (live() >= options.maxConnections) {
        refuse(socket);
        options.onRefused?.();
        logRefused();
        return;
      }
    }
    held.set(socket, { openedAt: performance.now(), busy: 0, bytesWhenIdle: 0 });
    const silent = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy();
    }, options.firstRequestMs).unref();
    socket.once('close', () => {
      clearTimeout(silent);
      held.delete(socket);
    });
    httpConnection.call(server, socket);
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = held.get(req.socket as Socket);
    if (!state) return;
    state.busy++;
    res.once('close', () => {
      state.busy--;
      state.bytesWhenIdle = req.socket.bytesRead ?? 0;
    });
  });
  return { open: () => held.size };
}

/**
 * Answers a connection the server cannot hold: 503 at once (a client writes its request and reads the
 * answer), reading and dropping what it sends meanwhile (closing on unread data would reset the
 * connection, and the client could lose the answer), closed a moment later.
 */
function refuse(socket: Socket): void {
  socket.on('error', () => undefined);
  socket.resume();
  writeRawProblem(socket, unavailable('The service holds as many connections as it can; try again shortly.', 1));
  setTimeout(() => socket.destroy(), CLOSE_AFTER_MS).unref();
}

/**
 * Counts events and reports how many at most once per `everyMs`: the first at once, those that follow
 * within the interval together, once it has passed. Returns the function that counts one.
 */
export function throttledReport(report: (count: number) => void, everyMs: number, now: () => number = () => performance.now()): () => void {
  let lastAt = Number.NEGATIVE_INFINITY;
  let unreported = 0;
  let trailing: NodeJS.Timeout | null = null;
  const write = () => {
    trailing = null;
    lastAt = now();
    report(unreported);
    unreported = 0;
  };
  return () => {
    unreported++;
    const wait = lastAt + everyMs - now();
    if (wait <= 0) write();
    else trailing ??= setTimeout(write, wait).unref();
  };
}
