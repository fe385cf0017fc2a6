import type { CompletionEvent } from '@gi/contracts';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTokenService } from '@gi/auth';
import type { TokenService } from '@gi/auth';
import { LocalJobBus } from '@gi/bus-local';
import { parseServiceConfig } from '@gi/config';
import { loadConsoleAssets } from '@gi/control';
import { CompletionWaiter, systemClock } from '@gi/domain';
import { DiskFileStore } from '@gi/files-disk';
import { callInProcess, createHttpApp, createHttpServer, registeredRoutes } from '@gi/http';
import { createLogger, createMetrics } from '@gi/observability';
import type { Metrics } from '@gi/observability';
import type { InProcessReply, InProcessRequest, RouteEntry, Routes } from '@gi/http';
import { createQuickJsRuntime } from '@gi/sandbox';
import type { QuickJsConnectorRuntime } from '@gi/sandbox';
import { createSqliteStore } from '@gi/store-sqlite';
import { quotaGate } from './build-deps';
import { controlServiceRoutes } from './control.service';
import { embeddedRoutes } from './embedded-process';
import { gatewayServiceRoutes } from './gateway.service';
import type { ServiceBase } from './open-store';
import { resultsServiceRoutes } from './results.service';
import { serverTimeouts } from './serve-http';

export const ADMIN_TOKEN = 'services-fixture-admin-token-0123456789';
const TOKEN_SECRET = 'services-fixture-token-secret-0123456789abcdef';

/** The services as their commands compose them: name -> the routes it serves. */
export type ServiceName = 'embedded' | 'gateway' | 'results' | 'control' | 'executor';
export const SERVICES: readonly ServiceName[] = ['embedded', 'gateway', 'results', 'control', 'executor'];

/** One composed service, not listening: its routes and a way to call it in-process. */
export interface ComposedService {
  server: Server;
  routes: RouteEntry[];
  /** The service's own metrics (each composed service has its own registry). */
  metrics: Metrics;
  call(request: InProcessRequest): Promise<InProcessReply>;
}

/**
 * Every service of `gi` composed in one process over one SQLite store and the in-process bus (the
 * distributed ones use RabbitMQ instead; their routes are the same), with the server settings the
 * commands use. Nothing runs connectors: calls are accepted and stay queued.
 */
export class ServicesFixture {
  readonly config;
  readonly base: ServiceBase;
  readonly tokens: TokenService;
  readonly dir: string;
  private readonly bus = new LocalJobBus();
  private readonly waiter = new CompletionWaiter<CompletionEvent>();
  private runtime?: QuickJsConnectorRuntime;
  private readonly composed = new Map<ServiceName, ComposedService>();

  constructor(env: Record<string, string> = {}) {
    this.dir = mkdtempSync(join(tmpdir(), 'gi-services-'));
    this.config = parseServiceConfig({ DATA_DIR: this.dir, ...env });
    const store = createSqliteStore(join(this.dir, 'store.db'), systemClock);
    this.base = { config: this.config, logger: createLogger('silent', 'fixture'), metrics: createMetrics(), clock: systemClock, store, files: new DiskFileStore(join(this.dir, 'files')) };
    this.tokens = createTokenService({ secret: TOKEN_SECRET, tokens: store.tokens, clock: systemClock });
  }

  async start(): Promise<this> {
    this.runtime = await createQuickJsRuntime({ workers: 0 });
    return this;
  }

  service(name: ServiceName): ComposedService {
    const known = this.composed.get(name);
    if (known) return known;
    const routes = this.routesOf(name);
    const metrics = createMetrics();
    const app = createHttpApp({ logger: this.base.logger, metrics, routes });
    const server = createHttpServer(app, serverTimeouts(this.config), metrics);
    const service = { server, routes: registeredRoutes(app.middleware), metrics, call: (request: InProcessRequest) => callInProcess(server, request) };
    this.composed.set(name, service);
    return service;
  }

  /** Admin call on the embedded service; throws unless 2xx. */
  async admin(method: string, path: string, body?: unknown): Promise<InProcessReply & { json: Record<string, unknown> }> {
    const reply = await this.service('embedded').call({
      method,
      path: `/admin${path}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (reply.status >= 300) throw new Error(`${method} ${path}: ${reply.status} ${reply.body}`);
    return { ...reply, json: reply.body ? (JSON.parse(reply.body) as Record<string, unknown>) : {} };
  }

  /** Defines the entity, deploys the connector and mints a token of the bot; returns the token and its id. */
  async setUpBot(botId: string, entityName = 'Order', integrationId = 'ack', code = 'Context.SetResponseEntity(Context.GetRequestEntity());') {
    await this.admin('PUT', `/bots/${botId}/entities/${entityName}`, {});
    await this.admin('PUT', `/bots/${botId}/integrations/${integrationId}`, { entityName, code });
    const minted = await this.admin('POST', `/bots/${botId}/tokens`, { label: 'fixture' });
    return { token: minted.json.token as string, tokenId: minted.json.tokenId as string };
  }

  async close(): Promise<void> {
    await this.runtime?.close();
    await this.bus.close();
    await this.base.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private routesOf(name: ServiceName): Routes[] {
    if (!this.runtime) throw new Error('start() the fixture first');
    const { base, bus, tokens, waiter, runtime } = this;
    const parts = { base, bus, tokens, waiter, runtime, adminToken: ADMIN_TOKEN, consoleAssets: loadConsoleAssets() };
    switch (name) {
      case 'embedded':
        return embeddedRoutes(parts);
      case 'gateway':
        return gatewayServiceRoutes({ ...parts, quotas: quotaGate(base, () => 1) });
      case 'results':
        return resultsServiceRoutes(parts);
      case 'control':
        return controlServiceRoutes(parts);
      case 'executor':
        return [];
    }
  }
}
