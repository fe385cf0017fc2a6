import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import type { TokenService } from '@gi/auth';
import { ALL_POOLS, LocalJobBus } from '@gi/bus-local';
import { loadOrCreateSecret } from '@gi/config';
import type { CompletionEvent, JobBus } from '@gi/contracts';
import { loadConsoleAssets } from '@gi/control';
import type { ConsoleAssets } from '@gi/control';
import type { CompletionWaiter, ConnectorRuntime } from '@gi/domain';
import { startExecutor, startSweeper, takeOverFrom } from '@gi/executor';
import { GatewayPresence } from '@gi/gateway';
import type { QuotaGate } from '@gi/gateway';
import { createHttpApp, readinessOf } from '@gi/http';
import { lendMetricsToPrimary, tracedJobBus, tracingEnabled } from '@gi/observability';
import type { Routes } from '@gi/http';
import { callbackDispatcher, completionWaiter, executorCapacity, executorDeps, openConnectorRuntime, openReplayRuntime, openTokenService, quarantineOnCrash, quotaGate, sealStoredSecrets, sweeperSettings } from './build-deps';
import { metricsFromPrimary } from './cluster-metrics';
import type { MetricsChannel } from './cluster-metrics';
import { CompletionRelay } from './completion-relay';
import type { RelayChannel } from './completion-relay';
import { announceGenerated } from './announce-secret';
import { controlServiceRoutes } from './control.service';
import { isTakeOverNotice, listeningNotice } from './embedded-roles';
import type { EmbeddedRole } from './embedded-roles';
import { gatewayServiceRoutes } from './gateway.service';
import { openServiceBase } from './open-store';
import { writerChecks } from './readiness-checks';
import type { ServiceBase, ServiceProcessBase } from './open-store';
import { listen, stopListening } from './serve-http';

/** One process of the embedded deployment: it accepts calls and runs them itself. */
export async function runEmbeddedProcess(role: EmbeddedRole): Promise<void> {
  const sole = role.kind === 'sole';
  const base = await openServiceBase('generic-integration', { embedded: true });
  const { config, logger, store, clock, metrics } = base;
  // Several processes: the primary created the file and said so, once.
  const adminToken = config.ADMIN_TOKEN ?? (sole ? announceGenerated(config.DATA_DIR, 'admin-token', 'admin token') : loadOrCreateSecret(config.DATA_DIR, 'admin-token').value);
  const tokens = openTokenService(base);
  const bus = tracingEnabled() ? tracedJobBus(new LocalJobBus(), 'in-process') : new LocalJobBus();
  const runtime = await openConnectorRuntime(base);
  const replayRuntime = await openReplayRuntime(base);
  const waiter = await completionWaiter(bus);
  const stopRelay = sole ? async () => undefined : await CompletionRelay.start(bus, waiter, process as RelayChannel);
  const callbacks = callbackDispatcher(base);

  const ownerId = sole ? `embedded-${randomUUID()}` : `embedded-${process.pid}-${randomUUID().slice(0, 8)}`;
  const { concurrency, perBot } = executorCapacity(config);
  const executor = await startExecutor(executorDeps(base, { bus, runtime, callbacks, ownerId }), [ALL_POOLS], concurrency, perBot);
  quarantineOnCrash(base);
  // A sole process is the only executor of its store: whatever a previous run left unfinished runs again.
  // Several: the first does that before the others start, then each takes over what a dead one left.
  const recovery = sole ? { recoverAllAtStart: true, recoverInRounds: false } : { recoverAllAtStart: role.recoverAtStart, recoverInRounds: true };
  const stopSweeper = await startSweeper({ store, bus, clock, logger, metrics, files: base.files, callbacks }, sweeperSettings(config, recovery, []));
  // Several processes share the quotas like distributed gateways: each enforces its part.
  const presence = sole ? null : await GatewayPresence.start({ registry: store.instances, instanceId: ownerId, clock, logger, onCount: (peers) => metrics.gatewayPeers.set(peers) });
  if (sole) metrics.gatewayPeers.set(1);

  // The in-process bus knows its queue at no cost: read at each scrape (an executor on RabbitMQ sweeps it).
  metrics.sources.queueDepth = () => bus.depthByPool();
  const quotas = quotaGate(base, presence ? () => presence.peers() : () => 1);
  const routes = embeddedRoutes({ base, bus, tokens, waiter, runtime: replayRuntime, adminToken, consoleAssets: loadConsoleAssets(), quotas });
  const app = createHttpApp({ logger, metrics, ready: readinessOf(writerChecks(base)), routes, accessLog: config.ACCESS_LOG });
  const banner = { dataDir: config.DATA_DIR, sandbox: runtime.isolation, console: '/console' };
  const server = sole ? await listen(app, base, banner) : await listen(app, base, { ...banner, process: role.index, ownerId }, 'process listening', { handedPort: role.port });
  if (!sole) joinCluster(base, { bus, ownerId, port: role.port, fields: banner });
  // One process of several does it (each would seal the same values again).
  if (sole || role.recoverAtStart) sealStoredSecrets(base);

  base.lifecycle.onShutdown([
    stopSweeper,
    async () => presence?.stop(),
    // No new connections; running jobs finish (answering their sync callers) until the drain deadline,
    // then those still going are handed back (Queued again: the next start runs them); then every other
    // wait ends with what the store holds (202 for polls, 504 + invocationId for sync calls still queued).
    async () => {
      const stopped = stopListening(server);
      await executor.stop(config.DRAIN_DEADLINE_SECONDS * 1000);
      waiter.releaseAll();
      await stopped;
    },
    stopRelay,
    () => callbacks.stop(),
    () => bus.close(),
    () => runtime.close(),
    () => replayRuntime.close(),
    () => store.close(),
  ]);
}

export interface EmbeddedParts {
  base: ServiceBase;
  bus: JobBus;
  tokens: TokenService;
  waiter: CompletionWaiter<CompletionEvent>;
  /** The control API's runtime (compile checks, replays): not the executor's, whose threads serve live calls. */
  runtime: Pick<ConnectorRuntime, 'compile' | 'run'>;
  adminToken: string;
  consoleAssets: ConsoleAssets;
  /** The quotas of this process's gateway: the whole of each when it is the only process. */
  quotas?: QuotaGate;
}

/**
 * What an embedded process serves on its one port: the routes of every service, and the console. A sole
 * process's gateway is the only one of its store: unless told otherwise it enforces the whole of every quota.
 */
export function embeddedRoutes({ base, bus, tokens, waiter, runtime, adminToken, consoleAssets, quotas }: EmbeddedParts): Routes[] {
  return [
    ...gatewayServiceRoutes({ base, bus, tokens, waiter, quotas: quotas ?? quotaGate(base, () => 1) }),
    ...controlServiceRoutes({ base, tokens, runtime, bus, adminToken, consoleAssets }),
  ];
}

/**
 * A forked process that listens joins its cluster: it takes over the jobs of a process that ended when
 * the primary asks, tells the primary it listens, and lets go of the IPC channel once stopped (the
 * channel would hold the process up).
 */
export function joinCluster(base: ServiceProcessBase, { bus, ownerId, port, fields }: { bus: Pick<JobBus, 'publish'>; ownerId: string; port: number; fields: Record<string, unknown> }): void {
  const { store, clock, logger, metrics } = base;
  // A scrape reaches whichever process gets the connection: each answers for all of them.
  lendMetricsToPrimary(metrics.registry);
  metrics.exposition = metricsFromPrimary(process as MetricsChannel);
  process.on('message', (message) => {
    if (!isTakeOverNotice(message)) return;
    takeOverFrom({ store, bus, clock }, message.owner).then(
      (taken) => taken.released > 0 && logger.info({ ...taken, from: message.owner }, 'took over the jobs of an ended process'),
      (err) => logger.warn({ err, from: message.owner }, 'could not take over the jobs of an ended process; the sweep will once their leases end'),
    );
  });
  process.send?.(listeningNotice(port, { ...fields, ownerId }));
  base.lifecycle.atLast(() => cluster.worker?.disconnect());
}
