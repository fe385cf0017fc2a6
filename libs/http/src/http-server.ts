import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import { GiError } from '@gi/domain';
import type { Metrics } from '@gi/observability';
import { guardConnections } from './connection-guard';
import type { ConnectionGuardOptions } from './connection-guard';
import { writeRawProblem } from './raw-problem';
import { requestTimeout } from './body-deadline';
import { UNMATCHED_ROUTE } from './request-observer';
import { CLOSE_AFTER_MS } from './stop-reading';

export interface ServerTimeouts {
  /** The request line and headers, from the first byte. */
  headersMs: number;
  /** The whole request as received, body included: the backstop above every body and upload timeout. */
  requestMs: number;
}

/** How often Node checks the two timeouts: they hold to within this. */
const CHECK_INTERVAL_MS = 1000;

/**
 * The HTTP server of every service, not yet listening. Requests whose headers take longer than
 * `headersMs` (a slow or silent client) and requests not received within `requestMs` answer 408 and are
 * closed; malformed requests (bad request line, bad Content-Length, ...) 400 and headers over 16 KiB 431,
 * each as a problem document, counted in `metrics` when given (route `unmatched`, method `unknown`: the
 * request was never parsed). Every header a client sends reaches the app (the total stays within 16 KiB).
 * With `connections`, the server holds at most so many at once (connection-guard.ts).
 */
export function createHttpServer(app: Koa, timeouts: ServerTimeouts, metrics?: Metrics, connections?: ConnectionGuardOptions): Server {
  const server = createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: Math.max(timeouts.requestMs, timeouts.headersMs),
      connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, timeouts.headersMs),
    },
    app.callback(),
  );
  server.maxHeadersCount = 0;
  server.keepAliveTimeout = 65_000;
  if (connections) {
    const guard = guardConnections(server, connections);
    guards.set(server, guard);
    if (metrics) metrics.sources.connections = () => guard.open();
  }
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const status = answerClientError(error, socket);
    if (status !== null) metrics?.httpDuration.observe({ route: UNMATCHED_ROUTE, method: 'unknown', status: String(status) }, 0);
  });
  return server;
}

const guards = new WeakMap<Server, { open(): number }>();

/** The connections a server made with `connections` holds open, however they came (accepted, or handed over); undefined for another server. */
export function openConnections(server: Server): number | undefined {
  return guards.get(server)?.open();
}

/** The answers to requests Node refuses before the app sees them. */
function clientProblem(error: NodeJS.ErrnoException): GiError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return requestTimeout('The request did not arrive in time; nothing was accepted.');
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return new GiError('headers_too_large', 'Request header fields too large', 'The request line and headers are larger than 16 KiB.');
  }
  return new GiError('bad_request', 'Bad request', 'The request is not valid HTTP/1.1 (request line, header or framing).');
}

/** Answers a request Node refused, if the connection can still take a reply; returns the status sent. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): number | null {
  // Only while no reply of this connection has started: another one would corrupt it.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return null;
  }
  const status = writeRawProblem(socket, clientProblem(error));
  // As after any refused call: the reply gets a moment to reach the client before the connection goes.
  setTimeout(() => socket.destroy(), CLOSE_AFTER_MS).unref();
  return status;
}
