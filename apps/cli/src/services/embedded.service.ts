import { randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import type { TokenService } from '@gi/auth';
import { ALL_POOLS, LocalJobBus } from '@gi/bus-local';
import { loadOrCreateSecret } from '@gi/config';
import { consoleRouter, controlRouter, loadConsoleAssets } from '@gi/control';
import type { ConsoleAssets } from '@gi/control';
import type { CompletionWaiter, ConnectorRuntime, JobBus } from '@gi/domain';
import { recoverInvocations, startExecutor } from '@gi/executor';
import { gatewayRouter } from '@gi/gateway';
import { createHttpApp } from '@gi/http';
import { resultsRouter } from '@gi/results';
import type { ServiceBase } from './service-wiring';
import {
  callbackDispatcher,
  completionWaiter,
  controlDeps,
  EXPIRY_SWEEP_INTERVAL_MS,
  gatewayDeps,
  listen,
  onShutdown,
  openConnectorRuntime,
  openServiceBase,
  openTokenService,
  quotaGate,
  resultsDeps,
  stopListening,
  sweepExpired,
} from './service-wiring';

/**
 * The embedded deployment (`gi up`, `npm start`): gateway, results, control and an executor pool in
 * one process on one port, with the SQLite store under DATA_DIR and the in-process bus.
 */
export async function runEmbedded(): Promise<void> {
  const base = await openServiceBase('generic-integration', { claimsWhatItCreates: true });
  const { config, logger, store, clock, metrics } = base;
  const adminToken = config.ADMIN_TOKEN ?? announceGenerated(config.DATA_DIR, 'admin-token', 'admin token');
  const tokens = openTokenService(base);
  const bus = new LocalJobBus();
  const runtime = await openConnectorRuntime(base);
  const waiter = await completionWaiter(bus);
  const callbacks = callbackDispatcher(base);

  const executor = await startExecutor(
    {
      store,
      bus,
      runtime,
      clock,
      logger,
      metrics,
      files: base.files,
      ownerId: `embedded-${randomUUID()}`,
      leaseMs: config.LEASE_SECONDS * 1000,
      maxAttempts: config.MAX_ATTEMPTS,
      callbacks,
    },
    [ALL_POOLS],
    config.EXECUTOR_CONCURRENCY,
  );
  // This process is the only executor of its store: whatever a previous run left unfinished runs again.
  const recovered = await recoverInvocations({ store, bus, clock }, { leaseBefore: Number.MAX_SAFE_INTEGER, publishedBefore: clock.now() + 1 });
  if (recovered.republished > 0) logger.info(recovered, 'recovered unfinished invocations');
  // Callbacks left due (a previous run stopped before delivering them), and from now on every sweep.
  const callbackSweep = setInterval(() => callbacks.kick(), config.SWEEP_INTERVAL_SECONDS * 1000).unref();
  callbacks.kick();
  // Expired invocations go, then the files of every invocation that is gone.
  const expirySweep = setInterval(() => {
    sweepExpired(base).catch((err) => logger.warn({ err }, 'expiry sweep failed'));
  }, EXPIRY_SWEEP_INTERVAL_MS).unref();

  metrics.gatewayPeers.set(1);
  const routers = embeddedRouters({ base, bus, tokens, waiter, runtime, adminToken, consoleAssets: loadConsoleAssets() });
  const app = createHttpApp({ logger, metrics, ready: () => store.ping(), routers });
  const server = await listen(app, base, { dataDir: config.DATA_DIR, sandbox: runtime.isolation, console: '/console' });

  onShutdown(logger, [
    () => clearInterval(expirySweep),
    () => clearInterval(callbackSweep),
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
  runtime: Pick<ConnectorRuntime, 'compile'>;
  adminToken: string;
  consoleAssets: ConsoleAssets;
}

/**
 * What the embedded process serves on its one port: the routes of every service, and the console. Its
 * gateway is the only one of its store: it enforces the whole of every quota.
 */
export function embeddedRouters({ base, bus, tokens, waiter, runtime, adminToken, consoleAssets }: EmbeddedParts): Router[] {
  return [
    gatewayRouter(gatewayDeps(base, bus, tokens, waiter, quotaGate(base, () => 1))),
    resultsRouter(resultsDeps(base, bus, tokens, waiter)),
    controlRouter(controlDeps(base, tokens, runtime, bus, adminToken)),
    consoleRouter(consoleAssets),
  ];
}

function announceGenerated(dataDir: string, file: string, what: string): string {
  const secret = loadOrCreateSecret(dataDir, file);
  process.stderr.write(`${secret.created ? 'Generated the' : 'Using the'} ${what} stored in ${secret.path}\n`);
  return secret.value;
}
