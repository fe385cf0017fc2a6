import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { GatewayPresence, gatewayRouter } from '@gi/gateway';
import { createHttpApp } from '@gi/http';
import { resultsRouter } from '@gi/results';
import { drain, gatewayDeps, listen, onShutdown, openPublicApi, quotaGate, resultsDeps } from './service-wiring';

/**
 * The gateway service: the inbound webhook endpoints. It also answers polls, so a deployment without a
 * path-routing proxy still has one base URL; with a proxy, polls go to the results service. Gateways
 * announce themselves in the store and each enforces its share of every quota.
 */
export async function runGateway(): Promise<void> {
  const { base, bus, tokens, waiter, ready } = await openPublicApi('gateway');
  const instanceId = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const presence = await GatewayPresence.start({
    registry: base.store.instances,
    instanceId,
    clock: base.clock,
    logger: base.logger,
    onCount: (peers) => base.metrics.gatewayPeers.set(peers),
  });
  const quotas = quotaGate(base, () => presence.peers());
  const routers = [gatewayRouter(gatewayDeps(base, bus, tokens, waiter, quotas)), resultsRouter(resultsDeps(base, bus, tokens, waiter))];
  const server = await listen(createHttpApp({ logger: base.logger, metrics: base.metrics, ready, routers }), base, { service: 'gateway', instanceId });
  // Calls in flight get their answer (a sync call still waiting gets 504 + invocationId).
  onShutdown(base.logger, [() => presence.stop(), () => drain(server, waiter), () => bus.close(), () => base.store.close()]);
}
