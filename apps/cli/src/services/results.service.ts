import { createHttpApp } from '@gi/http';
import { resultsRouter } from '@gi/results';
import { drain, listen, onShutdown, openPublicApi, resultsDeps } from './service-wiring';

/** The results service: long polls of GetGenericIntegrationResponse, woken by completion events. */
export async function runResults(): Promise<void> {
  const { base, bus, tokens, waiter, ready } = await openPublicApi('results');
  const routers = [resultsRouter(resultsDeps(base, bus, tokens, waiter))];
  const server = await listen(createHttpApp({ logger: base.logger, metrics: base.metrics, ready, routers }), base, { service: 'results' });
  onShutdown(base.logger, [() => drain(server, waiter), () => bus.close(), () => base.store.close()]);
}
