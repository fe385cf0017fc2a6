import { randomUUID } from 'node:crypto';
import type { TokenService } from '@gi/auth';
import { ALL_POOLS, LocalJobBus } from '@gi/bus-local';
import { loadOrCreateSecret } from '@gi/config';
import type { JobBus } from '@gi/contracts';
import { loadConsoleAssets } from '@gi/control';
import type { ConsoleAssets } from '@gi/control';
import type { CompletionWaiter, ConnectorRuntime } from '@gi/domain';
import { startExecutor, startSweeper } from '@gi/executor';
import { createHttpApp } from '@gi/http';
import { tracedJobBus, tracingEnabled } from '@gi/observability';
import type { Routes } from '@gi/http';
import { callbackDispatcher, completionWaiter, executorDeps, openConnectorRuntime, openTokenService, quarantineOnCrash, quotaGate, sealStoredSecrets, sweeperSettings } from './build-deps';
import { controlServiceRoutes } from './control.service';
import { gatewayServiceRoutes } from './gateway.service';
import { openServiceBase } from './open-store';
import type { ServiceBase } from './open-store';
import { listen, stopListening } from './serve-http';

/**
 * The embedded deployment (`gi up`, `npm start`): gateway, results, control and an executor pool in
 * one process on one port, with the SQLite store under DATA_DIR and the in-process bus.
 */
export async function runEmbedded(): Promise<void> {
  const base = await openServiceBase('generic-integration', { claimsWhatItCreates: true });
  const { config, logger, store, clock, metrics } = base;
  const adminToken = config.ADMIN_TOKEN ?? announceGenerated(config.DATA_DIR, 'admin-token', 'admin token');
  const tokens = openTokenService(base);
  const bus = tracingEnabled() ? tracedJobBus(new LocalJobBus(), 'in-process') : new LocalJobBus();
  const runtime = await openConnectorRuntime(base);
  const waiter = await completionWaiter(bus);
  const callbacks = callbackDispatcher(base);

  const ownerId = `embedded-${randomUUID()}`;
  const executor = await startExecutor(executorDeps(base, { bus, runtime, callbacks, ownerId }), [ALL_POOLS], config.EXECUTOR_CONCURRENCY);
  quarantineOnCrash(base);
  // This process is the only executor of its store: whatever a previous run left unfinished runs again.
  const stopSweeper = await startSweeper({ store, bus, clock, logger, metrics, files: base.files, callbacks }, sweeperSettings(config, true, []));

  metrics.gatewayPeers.set(1);
  // The in-process bus knows its queue at no cost: read at each scrape (an executor on RabbitMQ sweeps it).
  metrics.sources.queueDepth = () => bus.depthByPool();
  const routes = embeddedRoutes({ base, bus, tokens, waiter, runtime, adminToken, consoleAssets: loadConsoleAssets() });
  const app = createHttpApp({ logger, metrics, ready: () => store.ping(), routes, accessLog: config.ACCESS_LOG });
  const server = await listen(app, base, { dataDir: config.DATA_DIR, sandbox: runtime.isolation, console: '/console' });
  sealStoredSecrets(base);

  base.lifecycle.onShutdown([
    stopSweeper,
    // No new connections; running jobs finish (answering their sync callers); then every other wait
    // ends with what the store holds (202 for polls, 504 + invocationId for sync calls still queued).
    async () => {
      const stopped = stopListening(server);
      await executor.stop();
      waiter.releaseAll();
      await stopped;
    },
    () => callbacks.stop(),
    () => bus.close(),
    () => runtime.close(),
    () => store.close(),
  ]);
}

export interface EmbeddedParts {
  base: ServiceBase;
  bus: JobBus;
  tokens: TokenService;
  waiter: CompletionWaiter;
  runtime: Pick<ConnectorRuntime, 'compile' | 'run'>;
  adminToken: string;
  consoleAssets: ConsoleAssets;
}

/**
 * What the embedded process serves on its one port: the routes of every service, and the console. Its
 * gateway is the only one of its store: it enforces the whole of every quota.
 */
export function embeddedRoutes({ base, bus, tokens, waiter, runtime, adminToken, consoleAssets }: EmbeddedParts): Routes[] {
  return [
    ...gatewayServiceRoutes({ base, bus, tokens, waiter, quotas: quotaGate(base, () => 1) }),
    ...controlServiceRoutes({ base, tokens, runtime, bus, adminToken, consoleAssets }),
  ];
}

function announceGenerated(dataDir: string, file: string, what: string): string {
  const secret = loadOrCreateSecret(dataDir, file);
  process.stderr.write(`${secret.created ? 'Generated the' : 'Using the'} ${what} stored in ${secret.path}\n`);
  return secret.value;
}
