import { gatewayRouter } from '@gi/gateway';
import { createHttpApp } from '@gi/http';
import { resultsRouter } from '@gi/results';
import { drain, gatewayDeps, listen, onShutdown, openPublicApi, resultsDeps } from './service-wiring';

/**
 * The gateway service: the inbound webhook endpoints. It also answers polls, so a deployment without a
 * path-routing proxy still has one base URL; with a proxy, polls go to the results service.
 */
export async function runGateway(): Promise<void> {
  const { base, bus, tokens, waiter, ready } = await openPublicApi('gateway');
  const routers = [gatewayRouter(gatewayDeps(base, bus, tokens, waiter)), resultsRouter(resultsDeps(base, bus, tokens, waiter))];
  const server = await listen(createHttpApp({ logger: base.logger, metrics: base.metrics, ready, routers }), base, { service: 'gateway' });
  // Calls in flight get their answer (a sync call still waiting gets 504 + invocationId).
  onShutdown(base.logger, [() => drain(server, waiter), () => bus.close(), () => base.store.close()]);
}
