import type { TokenService } from '@gi/auth';
import { consoleRouter, controlRouter, loadConsoleAssets } from '@gi/control';
import type { ConsoleAssets } from '@gi/control';
import type { ConnectorRuntime } from '@gi/domain';
import type { JobBus } from '@gi/contracts';
import { createHttpApp, readinessOf } from '@gi/http';
import type { Routes } from '@gi/http';
import { controlDeps, openAmqpBus, openConnectorRuntime, openTokenService, sealStoredSecrets } from './build-deps';
import { openServiceBase } from './open-store';
import { storeAnswers } from './readiness-checks';
import type { ServiceBase } from './open-store';
import { listen, stopListening } from './serve-http';

/**
 * The control service: the admin API and the web console. Its bus only carries cancellations; the
 * runtime checks that code compiles and runs replays against drafts (in the sandbox executors use).
 */
export async function runControl(): Promise<void> {
  const base = await openServiceBase('control');
  const { config, logger, store, metrics } = base;
  if (!config.ADMIN_TOKEN) throw new Error('ADMIN_TOKEN is required to run the control service.');
  const bus = await openAmqpBus(base, 'control');
  // Replays only (a few runs at a time): one sandbox thread unless SANDBOX_WORKERS says otherwise.
  const runtime = await openConnectorRuntime(base, 1);
  const app = createHttpApp({
    logger,
    metrics,
    // The store alone: the admin API and the console work without the broker, whose only use here is
    // to hint cancellations (docs/decisions.md, Readiness of the control service).
    ready: readinessOf({ store: storeAnswers(store) }),
    routes: controlServiceRoutes({ base, tokens: openTokenService(base), runtime, bus, adminToken: config.ADMIN_TOKEN, consoleAssets: loadConsoleAssets() }),
    accessLog: config.ACCESS_LOG,
  });
  const server = await listen(app, base, { service: 'control' });
  sealStoredSecrets(base);
  base.lifecycle.onShutdown([() => stopListening(server), () => bus.close(), () => runtime.close(), () => store.close()]);
}

export interface ControlParts {
  base: ServiceBase;
  tokens: TokenService;
  runtime: Pick<ConnectorRuntime, 'compile' | 'run'>;
  bus: JobBus;
  adminToken: string;
  consoleAssets: ConsoleAssets;
}

/** What the control service serves: the admin API and the console. */
export function controlServiceRoutes({ base, tokens, runtime, bus, adminToken, consoleAssets }: ControlParts): Routes[] {
  return [controlRouter(controlDeps(base, tokens, runtime, bus, adminToken)), consoleRouter(consoleAssets)];
}
