import { controlRouter } from '@gi/control';
import { createHttpApp } from '@gi/http';
import { createQuickJsRuntime } from '@gi/sandbox';
import { controlSettings, listen, onShutdown, openAmqpBus, openServiceBase, openTokenService, stopListening } from './service-wiring';

/**
 * The control service: the admin API. Its bus only carries cancellations; the runtime is used only to
 * check that code compiles.
 */
export async function runControl(): Promise<void> {
  const base = await openServiceBase('control');
  const { config, logger, store, metrics, clock } = base;
  if (!config.ADMIN_TOKEN) throw new Error('ADMIN_TOKEN is required to run the control service.');
  const bus = await openAmqpBus(base, 'control');
  const runtime = await createQuickJsRuntime({ workers: 0 });
  const app = createHttpApp({
    logger,
    metrics,
    ready: async () => (await store.ping()) && (await bus.ping()),
    routers: [
      controlRouter({
        store,
        tokens: openTokenService(base),
        runtime,
        bus,
        clock,
        settings: controlSettings(config, config.ADMIN_TOKEN),
      }),
    ],
  });
  const server = await listen(app, base, { service: 'control' });
  onShutdown(logger, [() => stopListening(server), () => bus.close(), () => runtime.close(), () => store.close()]);
}
