import type { Server } from 'node:http';
import type Koa from 'koa';
import { RELEASE_VERSION } from '@gi/config';
import type { ServiceConfig } from '@gi/config';
import type { CompletionWaiter } from '@gi/domain';
import { createHttpServer, openConnections } from '@gi/http';
import type { BodyTimeouts, ConnectionGuardOptions, ServerTimeouts } from '@gi/http';
import { takeConnectionsFromPrimary } from './connection-handoff';
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
 * an embedded cluster logs another `message`: its primary says `listening` once, for all; it listens on
 * nothing itself but serves the connections its primary hands over (`handedPort`: the primary's port).
 */
export async function listen(app: Koa, base: ServiceBase, fields: Record<string, unknown> = {}, message = 'listening', options: { handedPort?: number } = {}): Promise<Server> {
  const { config, logger } = base;
  const server = createHttpServer(app, serverTimeouts(config), base.metrics, connectionGuard(base));
  let port = options.handedPort;
  if (port === undefined) {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.PORT, config.HOST, resolve);
    });
    const address = server.address();
    port = typeof address === 'object' && address ? address.port : config.PORT;
  } else {
    // Node tracks a server's connections (the headers and request timeouts, closing idle ones) from its
    // 'listening' event on: this one listens through its primary, so it is told.
    server.emit('listening');
    const stopTaking = takeConnectionsFromPrimary(server);
    server.once('close', stopTaking);
  }
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
    const done = () => {
      clearInterval(idle);
      clearTimeout(force);
      resolve();
    };
    server.close(() => {
      // Connections a primary handed over are not the listener's, which does not wait for them: counted here.
      const open = () => openConnections(server) ?? 0;
      if (open() === 0) return done();
      const check = setInterval(() => {
        if (open() > 0) return;
        clearInterval(check);
        done();
      }, 50);
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
