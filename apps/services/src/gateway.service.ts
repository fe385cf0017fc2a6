import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { TokenService } from '@gi/auth';
import type { CompletionWaiter } from '@gi/domain';
import type { CompletionEvent, JobBus } from '@gi/contracts';
import { GatewayPresence, gatewayRouter } from '@gi/gateway';
import type { QuotaGate, UnpublishedJobs } from '@gi/gateway';
import { createHttpApp, readinessOf } from '@gi/http';
import type { Routes } from '@gi/http';
import { resultsRouter } from '@gi/results';
import { gatewayDeps, openPublicApi, quotaGate, resultsDeps, unpublishedJobs } from './build-deps';
import { openServiceBase } from './open-store';
import { brokerAnswers, writerChecks } from './readiness-checks';
import type { ServiceBase } from './open-store';
import { drain, listen } from './serve-http';

/**
 * The gateway service: the inbound webhook endpoints. It also answers polls, so a deployment without a
 * path-routing proxy still has one base URL; with a proxy, polls go to the results service. Gateways
 * announce themselves in the store and each enforces its share of every quota.
 */
export async function runGateway(): Promise<void> {
  const base = await openServiceBase('gateway');
  const { bus, tokens, waiter } = await openPublicApi(base, 'gateway');
  const ready = readinessOf({ ...writerChecks(base), broker: brokerAnswers(bus) });
  const instanceId = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const presence = await GatewayPresence.start({
    registry: base.store.instances,
    instanceId,
    clock: base.clock,
    logger: base.logger,
    onCount: (peers) => base.metrics.gatewayPeers.set(peers),
  });
  const quotas = quotaGate(base, () => presence.peers());
  const unpublished = unpublishedJobs(base, bus);
  const routes = gatewayServiceRoutes({ base, bus, tokens, waiter, quotas, unpublished });
  const server = await listen(createHttpApp({ logger: base.logger, metrics: base.metrics, ready, routes, accessLog: base.config.ACCESS_LOG }), base, { service: 'gateway', instanceId });
  // Calls in flight get their answer (a sync call still waiting gets 504 + invocationId).
  base.lifecycle.onShutdown([
    () => presence.stop(),
    () => drain(server, waiter),
    () => unpublished.size > 0 && base.logger.warn({ jobs: unpublished.size }, 'jobs not published yet are left to the sweepers'),
    () => bus.close(),
    () => base.store.close(),
  ]);
}

export interface PublicApiParts {
  base: ServiceBase;
  bus: JobBus;
  tokens: TokenService;
  waiter: CompletionWaiter<CompletionEvent>;
}

/** What the gateway serves: the webhook endpoints, and the polls. */
export function gatewayServiceRoutes({ base, bus, tokens, waiter, quotas, unpublished }: PublicApiParts & { quotas: QuotaGate; unpublished?: UnpublishedJobs }): Routes[] {
  return [gatewayRouter(gatewayDeps(base, bus, tokens, waiter, quotas, unpublished)), resultsRouter(resultsDeps(base, bus, tokens, waiter))];
}
