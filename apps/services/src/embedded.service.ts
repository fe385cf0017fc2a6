import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import type { TokenService } from '@gi/auth';
import { ALL_POOLS, LocalJobBus } from '@gi/bus-local';
import { loadOrCreateSecret, parseServiceConfig, processEnvironment } from '@gi/config';
import type { CompletionEvent, JobBus } from '@gi/contracts';
import { loadConsoleAssets } from '@gi/control';
import type { ConsoleAssets } from '@gi/control';
import type { CompletionWaiter, ConnectorRuntime } from '@gi/domain';
import { startExecutor, startSweeper } from '@gi/executor';
import { GatewayPresence } from '@gi/gateway';
import type { QuotaGate } from '@gi/gateway';
import { createHttpApp, readinessOf } from '@gi/http';
import { tracedJobBus, tracingEnabled } from '@gi/observability';
import type { Routes } from '@gi/http';
import { callbackDispatcher, completionWaiter, executorCapacity, executorDeps, openConnectorRuntime, openReplayRuntime, openTokenService, quarantineOnCrash, quotaGate, sealStoredSecrets, sweeperSettings } from './build-deps';
import { CompletionRelay } from './completion-relay';
import type { RelayChannel } from './completion-relay';
import { announceGenerated } from './announce-secret';
import { controlServiceRoutes } from './control.service';
import { embeddedWorkerRole, joinCluster, runEmbeddedCluster } from './embedded-cluster';
import { embeddedProcessCount } from './embedded-shares';
import { gatewayServiceRoutes } from './gateway.service';
import { openServiceBase } from './open-store';
import { writerChecks } from './readiness-checks';
import type { ServiceBase } from './open-store';
import { listen, stopListening } from './serve-http';

/** Which part of the embedded deployment this process plays. */
export type EmbeddedRole =
  /** The only process (`--processes 1`): today's deployment, no cluster. */
  | { kind: 'sole' }
  /**
   * One of several processes sharing the port and the store; the first recovers what a previous run left.
   * The primary listens on `port` and hands each connection to a process (connection-handoff.ts).
   */
  | { kind: 'worker'; index: number; recoverAtStart: boolean; port: number };

/**
 * The embedded deployment (`gi up`, `npm start`): gateway, results, control and an executor pool on one
 * port, with the SQLite store under DATA_DIR and the in-process bus. With `processes` above 1 (the
 * default on a machine of several cores) a primary runs that many such processes (embedded-cluster.ts).
 */
export async function runEmbedded(options: { processes?: number } = {}): Promise<void> {
  if (cluster.isWorker) return runEmbeddedProcess(embeddedWorkerRole(processEnvironment()));
  const processes = embeddedProcessCount(options.processes, parseServiceConfig(processEnvironment()));
  if (processes === 1) return runEmbeddedProcess({ kind: 'sole' });
  return runEmbeddedCluster(processes);
}

/** One process of the embedded deployment: it accepts calls and runs them itself. */
async function runEmbeddedProcess(role: EmbeddedRole): Promise<void> {
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
