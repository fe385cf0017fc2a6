import type { Server } from 'node:http';
import type Koa from 'koa';
import { RELEASE_VERSION } from '@gi/config';
import type { ServiceConfig } from '@gi/config';
import type { CompletionWaiter } from '@gi/domain';
import { createHttpServer } from '@gi/http';
import type { BodyTimeouts, ConnectionGuardOptions, ServerTimeouts } from '@gi/http';
import type { ServiceBase } from './open-store';

type TimeoutSettings = Pick<ServiceConfig, 'HEADERS_TIMEOUT_SECONDS' | 'BODY_IDLE_TIMEOUT_SECONDS' | 'BODY_TIMEOUT_SECONDS' | 'UPLOAD_TIMEOUT_SECONDS'>;

/** How long a client may take to send a text body (webhook, control API). */
export function bodyTimeouts(config: TimeoutSettings): BodyTimeouts {
  return { idleMs: config.BODY_IDLE_TIMEOUT_SECONDS * 1000, totalMs: config.BODY_TIMEOUT_SECONDS * 1000 };
}

/** How long a client may take to send a file transfer: the same pauses as a text body, longer in all. */
export function uploadTimeouts(config: TimeoutSettings): BodyTimeouts {
  return { idleMs: config.BODY_IDLE_TIMEOUT_SECONDS * 1000, totalMs: config.UPLOAD_TIMEOUT_SECONDS * 1000 };
}

/**
 * The server's own clocks: the headers, and the whole request as received; the body clocks run inside
 * it, so this only ever ends a request they missed. Receiving ends before a sync call's wait or a long
 * poll begins, which neither counts.
 */
export function serverTimeouts(config: TimeoutSettings): ServerTimeouts {
  const headersMs = config.HEADERS_TIMEOUT_SECONDS * 1000;
  return { headersMs, requestMs: headersMs + Math.max(config.BODY_TIMEOUT_SECONDS, config.UPLOAD_TIMEOUT_SECONDS) * 1000 + REQUEST_TIMEOUT_MARGIN_MS };
}

/** Time a request may spend between its headers and the start of its body's clock (token, store look-ups). */
const REQUEST_TIMEOUT_MARGIN_MS = 30_000;

/**
 * Listens on PORT/HOST and logs `listening` with the actual port (PORT=0 picks a free one). A process of
 * an embedded cluster logs another `message`: its primary says `listening` once, for all.
 */
export async function listen(app: Koa, base: ServiceBase, fields: Record<string, unknown> = {}, message = 'listening'): Promise<Server> {
  const { config, logger } = base;
  const server = createHttpServer(app, serverTimeouts(config), base.metrics, connectionGuard(base));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  logger.info({ port, version: RELEASE_VERSION, platformVersion: config.PLATFORM_VERSION.join('.'), ...fields }, message);
  return server;
}

/**
 * The connections a process holds: at most MAX_CONNECTIONS (503 past it, counted and logged at most
 * every 10 s), and a new one silent for FIRST_REQUEST_TIMEOUT_SECONDS is closed.
 */
export function connectionGuard(base: Pick<ServiceBase, 'config' | 'logger' | 'metrics'>): ConnectionGuardOptions {
  const { config, logger, metrics } = base;
  return {
    maxConnections: config.MAX_CONNECTIONS,
    firstRequestMs: config.FIRST_REQUEST_TIMEOUT_SECONDS * 1000,
    onRefused: () => metrics.connectionsRefused.inc(),
    logRefused: (fields) => logger.warn(fields, 'connections refused with 503: the process holds MAX_CONNECTIONS'),
  };
}

/**
 * Stops taking new connections and resolves once open requests have finished: keep-alive connections are
 * closed as soon as they go idle, and any still open after `graceMs` are cut.
 */
export function stopListening(server: Server, graceMs = 70_000): Promise<void> {
  return new Promise<void>((resolve) => {
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** Shutdown of a service with waiting requests: no new connections, every wait ends with what the store holds. */
export async function drain(server: Server, waiter: Pick<CompletionWaiter, 'releaseAll' | 'size'>): Promise<void> {
  const stopped = stopListening(server);
  waiter.releaseAll();
  await stopped;
}
