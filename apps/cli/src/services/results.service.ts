import { createHttpApp } from '@gi/http';
import { resultsRouter } from '@gi/results';
import { completionWaiter, listen, onShutdown, openAmqpBus, openServiceBase, openTokenService, resultsDeps, stopListening } from './service-wiring';

/** The results service: long polls of GetGenericIntegrationResponse, woken by completion events. */
export async function runResults(): Promise<void> {
  const base = openServiceBase('results');
  const { logger, store, metrics } = base;
  const bus = await openAmqpBus(base, 'results');
  const tokens = openTokenService(base);
  const waiter = await completionWaiter(bus);
  const app = createHttpApp({
    logger,
    metrics,
    ready: async () => (await store.ping()) && (await bus.ping()),
    routers: [resultsRouter(resultsDeps(base, tokens, waiter))],
  });
  const server = await listen(app, base, { service: 'results' });
  onShutdown(logger, [
    async () => {
      const stopped = stopListening(server);
      waiter.releaseAll();
      await stopped;
    },
    () => bus.close(),
    () => store.close(),
  ]);
}
