import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { startExecutor, startSweeper } from '@gi/executor';
import { createHttpApp, readinessOf } from '@gi/http';
import { callbackDispatcher, executorDeps, openAmqpBus, openConnectorRuntime, quarantineOnCrash, sweeperSettings } from './build-deps';
import { openServiceBase } from './open-store';
import { brokerAnswers, writerChecks } from './readiness-checks';
import { listen, stopListening } from './serve-http';

/**
 * An executor: consumes the given pools, runs connectors, records outcomes, delivers callbacks. Every
 * executor also sweeps (startSweeper): sweeps of several executors never hand out the same invocation.
 */
export async function runExecutor(pools: string[]): Promise<void> {
  const base = await openServiceBase('executor');
  const { config, logger, store, metrics } = base;
  const bus = await openAmqpBus(base, 'executor', pools);
  const runtime = await openConnectorRuntime(base);
  const ownerId = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const callbacks = callbackDispatcher(base);
  const executor = await startExecutor(executorDeps(base, { bus, runtime, callbacks, ownerId }), pools, config.EXECUTOR_CONCURRENCY);
  quarantineOnCrash(base);
  const stopSweeper = await startSweeper({ store, bus, clock: base.clock, logger, metrics, files: base.files, callbacks }, sweeperSettings(config, { recoverAllAtStart: false, recoverInRounds: true }, pools));

  const app = createHttpApp({ logger, metrics, ready: readinessOf({ ...writerChecks(base), broker: brokerAnswers(bus) }), routes: [], accessLog: config.ACCESS_LOG });
  const server = await listen(app, base, { service: 'executor', pools, ownerId, sandbox: runtime.isolation });
  base.lifecycle.onShutdown([
    stopSweeper,
    // Stop consuming and let running jobs finish until the drain deadline; then hand back the rest
    // (stopped, leases released, jobs requeued). Unacknowledged ones go back to the queue.
    () => executor.stop(config.DRAIN_DEADLINE_SECONDS * 1000),
    () => callbacks.stop(),
    () => bus.close(),
    () => stopListening(server),
    () => runtime.close(),
    () => store.close(),
  ]);
}
