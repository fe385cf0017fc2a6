import { consoleRouter, controlRouter, loadConsoleAssets } from '@gi/control';
import { createHttpApp } from '@gi/http';
import { createQuickJsRuntime } from '@gi/sandbox';
import { controlDeps, listen, onShutdown, openAmqpBus, openServiceBase, openTokenService, stopListening } from './service-wiring';

/**
 * The control service: the admin API and the web console. Its bus only carries cancellations; the
 * runtime is used only to check that code compiles.
 */
export async function runControl(): Promise<void> {
  const base = await openServiceBase('control');
  const { config, logger, store, metrics } = base;
  if (!config.ADMIN_TOKEN) throw new Error('ADMIN_TOKEN is required to run the control service.');
  const bus = await openAmqpBus(base, 'control');
  const runtime = await createQuickJsRuntime({ workers: 0 });
  const app = createHttpApp({
    logger,
    metrics,
    ready: async () => (await store.ping()) && (await bus.ping()),
    routers: [controlRouter(controlDeps(base, openTokenService(base), runtime, bus, config.ADMIN_TOKEN)), consoleRouter(loadConsoleAssets())],
  });
  const server = await listen(app, base, { service: 'control' });
  onShutdown(logger, [() => stopListening(server), () => bus.close(), () => runtime.close(), () => store.close()]);
}
