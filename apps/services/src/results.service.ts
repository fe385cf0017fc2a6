import { createHttpApp } from '@gi/http';
import type { Routes } from '@gi/http';
import { resultsRouter } from '@gi/results';
import { openPublicApi, resultsDeps } from './build-deps';
import type { PublicApiParts } from './gateway.service';
import { openServiceBase } from './open-store';
import { drain, listen } from './serve-http';

/** The results service: long polls of GetGenericIntegrationResponse, woken by completion events. */
export async function runResults(): Promise<void> {
  const base = await openServiceBase('results');
  const { bus, tokens, waiter, ready } = await openPublicApi(base, 'results');
  const routes = resultsServiceRoutes({ base, bus, tokens, waiter });
  const server = await listen(createHttpApp({ logger: base.logger, metrics: base.metrics, ready, routes, accessLog: base.config.ACCESS_LOG }), base, { service: 'results' });
  base.lifecycle.onShutdown([() => drain(server, waiter), () => bus.close(), () => base.store.close()]);
}

/** What the results service serves: the polls (and cancellations). */
export function resultsServiceRoutes({ base, bus, tokens, waiter }: PublicApiParts): Routes[] {
  return [resultsRouter(resultsDeps(base, bus, tokens, waiter))];
}
