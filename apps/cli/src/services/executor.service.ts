import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { recoverInvocations, startExecutor } from '@gi/executor';
import { createHttpApp } from '@gi/http';
import {
  callbackDispatcher,
  EXPIRY_SWEEP_INTERVAL_MS,
  listen,
  onShutdown,
  openAmqpBus,
  openConnectorRuntime,
  openServiceBase,
  stopListening,
  sweepExpired,
} from './service-wiring';

/**
 * An executor: consumes the given pools, runs connectors, records outcomes, delivers callbacks. Every
 * executor also sweeps: it requeues invocations whose lease expired (their executor died), republishes
 * queued ones whose job was never published or got lost, and sends callbacks left due. Sweeps of several
 * executors never hand out the same invocation. Less often it deletes expired invocations and the files
 * of invocations that are gone.
 */
export async function runExecutor(pools: string[]): Promise<void> {
  const base = await openServiceBase('executor');
  const { config, logger, store, metrics, clock } = base;
  const bus = await openAmqpBus(base, 'executor', pools);
  const runtime = await openConnectorRuntime(base);
  const ownerId = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const callbacks = callbackDispatcher(base);
  const executor = await startExecutor(
    { store, bus, runtime, clock, logger, metrics, files: base.files, ownerId, leaseMs: config.LEASE_SECONDS * 1000, maxAttempts: config.MAX_ATTEMPTS, callbacks },
    pools,
    config.EXECUTOR_CONCURRENCY,
  );

  let sweeping = false;
  const sweep = async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      const now = clock.now();
      const result = await recoverInvocations({ store, bus, clock }, { leaseBefore: now, publishedBefore: now - config.REPUBLISH_AFTER_SECONDS * 1000 });
      if (result.requeued + result.republished > 0) logger.info(result, 'sweep recovered invocations');
      callbacks.kick();
      for (const pool of pools) {
        const depth = await bus.queueDepth(pool);
        if (depth !== null) metrics.queueDepth.set({ pool }, depth);
      }
    } catch (err) {
      logger.warn({ err }, 'sweep failed; next round will retry');
    } finally {
      sweeping = false;
    }
  };
  const sweeper = setInterval(() => void sweep(), config.SWEEP_INTERVAL_SECONDS * 1000).unref();
  const expirySweeper = setInterval(() => {
    sweepExpired(base).catch((err) => logger.warn({ err }, 'expiry sweep failed; next round will retry'));
  }, EXPIRY_SWEEP_INTERVAL_MS).unref();

  const app = createHttpApp({ logger, metrics, ready: async () => (await store.ping()) && (await bus.ping()), routers: [] });
  const server = await listen(app, base, { service: 'executor', pools, ownerId, sandbox: runtime.isolation });
  onShutdown(logger, [
    () => clearInterval(sweeper),
    () => clearInterval(expirySweeper),
    // Stop consuming and finish running jobs; unacknowledged ones go back to the queue.
    () => executor.stop(),
    () => callbacks.stop(),
    () => bus.close(),
    () => stopListening(server),
    () => runtime.close(),
    () => store.close(),
  ]);
}
