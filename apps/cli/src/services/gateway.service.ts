import { gatewayRouter } from '@gi/gateway';
import { createHttpApp } from '@gi/http';
import { resultsRouter } from '@gi/results';
import { completionWaiter, gatewayDeps, listen, onShutdown, openAmqpBus, openServiceBase, openTokenService, resultsDeps, stopListening } from './service-wiring';

/**
 * The gateway service: the inbound webhook endpoints. It also answers polls, so a deployment without a
 * path-routing proxy still has one base URL; with a proxy, polls go to the results service.
 */
export async function runGateway(): Promise<void> {
  const base = openServiceBase('gateway');
  const { logger, store, metrics } = base;
  const bus = await openAmqpBus(base, 'gateway');
  const tokens = openTokenService(base);
  const waiter = await completionWaiter(bus);
  const app = createHttpApp({
    logger,
    metrics,
    ready: async () => (await store.ping()) && (await bus.ping()),
    routers: [gatewayRouter(gatewayDeps(base, bus, tokens, waiter)), resultsRouter(resultsDeps(base, tokens, waiter))],
  });
  const server = await listen(app, base, { service: 'gateway' });
  onShutdown(logger, [
    // Stop taking calls; calls in flight get their answer (a sync call still waiting gets 504 + invocationId).
    async () => {
      const stopped = stopListening(server);
      waiter.releaseAll();
      await stopped;
    },
    () => bus.close(),
    () => store.close(),
  ]);
}
