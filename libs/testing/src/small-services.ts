import type { CompletionEvent } from '@gi/contracts';
import { createTokenService } from '@gi/auth';
import type { TokenService } from '@gi/auth';
import { LocalJobBus } from '@gi/bus-local';
import { CompletionWaiter, DEFAULT_CONNECTOR_LIMITS, systemClock } from '@gi/domain';
import type { Clock, IntegrationSettings } from '@gi/domain';
import { callInProcess, createHttpApp, createHttpServer } from '@gi/http';
import type { InProcessReply, InProcessRequest, Routes } from '@gi/http';
import { createLogger, createMetrics } from '@gi/observability';
import type { Logger } from '@gi/observability';
import { createFakeStore } from './fake-store';

const TOKEN_SECRET = 'small-services-token-secret-0123456789abcdef';

/**
 * What the small tests run a service's routers on: every port in memory (the store of fake-store.ts,
 * the in-process bus, a completion waiter it feeds), and the routers served by `app.callback()` through
 * an in-memory connection: no port, no file, no broker.
 */
export class SmallServices {
  readonly store;
  readonly bus = new LocalJobBus();
  readonly waiter = new CompletionWaiter<CompletionEvent>();
  readonly tokens: TokenService;
  readonly logger: Logger = createLogger('silent', 'small');
  readonly metrics = createMetrics();

  constructor(readonly clock: Clock = systemClock) {
    this.store = createFakeStore(clock);
    this.tokens = createTokenService({ secret: TOKEN_SECRET, tokens: this.store.tokens, clock });
    void this.bus.onCompletion((event) => this.waiter.notify(event));
  }

  /** Serves `routes` as a service would (problem details, access, metrics), without listening. */
  serve(routes: Routes[]): (request: InProcessRequest) => Promise<InProcessReply> {
    const app = createHttpApp({ logger: this.logger, metrics: this.metrics, routes });
    const server = createHttpServer(app, { headersMs: 10_000, requestMs: 60_000 });
    return (request) => callInProcess(server, request);
  }

  /** A bot with an entity, an integration and a token: what a webhook call needs. */
  async bot(botId = 'bot-a', integration: Partial<IntegrationSettings> = {}): Promise<{ token: string; tokenId: string }> {
    const settings: IntegrationSettings = {
      entityName: 'Order',
      code: 'Context.SetResponseEntity(Context.GetRequestEntity());',
      pool: 'default',
      timeoutSeconds: 60,
      allowedHosts: [],
      limits: { ...DEFAULT_CONNECTOR_LIMITS },
      callbackUrl: null,
      ...integration,
    };
    await this.store.catalog.putEntity(botId, settings.entityName, [], this.clock.now());
    await this.store.catalog.deployIntegration(botId, 'ack', settings, this.clock.now());
    const { token, tokenId } = await this.tokens.mint(botId, { label: 'small' });
    return { token, tokenId };
  }

  async close(): Promise<void> {
    this.waiter.releaseAll();
    await this.bus.close();
    await this.store.close();
  }
}
