import { createHttpApp, readinessOf } from '@gi/http';
import type { Routes } from '@gi/http';
import { resultsRouter } from '@gi/results';
import { openPublicApi, resultsDeps } from './build-deps';
import type { PublicApiParts } from './gateway.service';
import { openServiceBase } from './open-store';
import { brokerAnswers, storeAnswers } from './readiness-checks';
import { drain, listen } from './serve-http';

/** The results service: long polls of GetGenericIntegrationResponse, woken by completion events. */
export async function runResults(): Promise<void> {
  const base = await openServiceBase('results');
  const { bus, tokens, waiter } = await openPublicApi(base, 'results');
  // Polls read the store: its writes and the local disk are the writers' concern.
  const ready = readinessOf({ store: storeAnswers(base.store), broker: brokerAnswers(bus) });
  const routes = resultsServiceRoutes({ base, bus, tokens, waiter });
  const server = await listen(createHttpApp({ logger: base.logger, metrics: base.metrics, ready, routes, accessLog: base.config.ACCESS_LOG }), base, { service: 'results' });
  base.lifecycle.onShutdown([() => drain(server, waiter), () => bus.close(), () => base.store.close()]);
}

/** What the results service serves: the polls (and cancellations). */
export function resultsServiceRoutes({ base, bus, tokens, waiter }: PublicApiParts): Routes[] {
  return [resultsRouter(resultsDeps(base, bus, tokens, waiter))];
}
