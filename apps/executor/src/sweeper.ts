import type { JobBus } from '@gi/contracts';
import type { Clock, FileStore, Store } from '@gi/domain';
import type { Logger, Metrics } from '@gi/observability';
import { recoverInvocations } from './recover-invocations';
import { sweepFiles } from './sweep-files';
import { WAKE_INTERVAL_MS, wakeWaiting } from './wake-waiting';

export interface SweeperDeps {
  store: Store;
  bus: Pick<JobBus, 'publish' | 'queueDepth'>;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  files: FileStore;
  /** Sends the callbacks left due (a previous process stopped before delivering them, or a retry fell due). */
  callbacks: { kick(): void };
}

export interface SweeperSettings {
  /**
   * Returns everything unfinished to the queue once, at start: only for the first process of an embedded
   * deployment, before any other takes work (a previous run left it; nothing else can be running it).
   */
  recoverAllAtStart: boolean;
  /**
   * One executor of many (distributed, or an embedded deployment of several processes): every round
   * requeues invocations whose lease expired and republishes queued ones published longer than
   * `republishAfterMs` ago (a process died with them). A single embedded process has no one to take over from.
   */
  recoverInRounds: boolean;
  /** How often a round runs (SWEEP_INTERVAL_SECONDS). */
  intervalMs: number;
  republishAfterMs: number;
  /** The pools whose queue depth the rounds report (gi_queue_depth). */
  pools: string[];
  /** How often expired invocations and their files are deleted: what it frees is hours old. */
  expiryIntervalMs: number;
  /** Files are swept once older than this: the longest an upload can take, plus a margin for clocks that disagree. */
  fileGraceMs: number;
}

/** How often expired invocations and their files are swept. */
export const EXPIRY_SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * The sweeper, the leader-less reconciliation of the store against the bus (docs/architecture.md,
 * "Distributed recovery"): it hands invocations left behind by a dead gateway or executor back to the
 * executors (conditional updates give each one to a single sweeper per round), wakes the durable runs
 * whose wait is over (every second, in every process that runs executors), sends callbacks left due,
 * and less often deletes expired invocations and the files of invocations that are gone. Used by
 * the embedded process and by every executor; resolves once the start-up recovery is done, with the
 * function that stops it.
 */
export async function startSweeper(deps: SweeperDeps, settings: SweeperSettings): Promise<() => void> {
  const { store, bus, clock, logger, metrics } = deps;
  if (settings.recoverAllAtStart) {
    const recovered = await recoverInvocations({ store, bus, clock }, { leaseBefore: Number.MAX_SAFE_INTEGER, publishedBefore: clock.now() + 1 });
    if (recovered.republished > 0) logger.info(recovered, 'recovered unfinished invocations');
  }
  deps.callbacks.kick();

  // Waits that ended while nothing ran (every process stopped) end now, then every second.
  let waking = false;
  const wake = async () => {
    if (waking) return;
    waking = true;
    try {
      const woken = await wakeWaiting({ store, bus, clock });
      if (woken > 0) logger.debug({ woken }, 'woke waiting invocations');
    } catch (err) {
      logger.warn({ err }, 'waking waiting invocations failed; the next round retries');
    } finally {
      waking = false;
    }
  };
  await wake();
  const wakes = setInterval(() => void wake(), WAKE_INTERVAL_MS).unref();

  let sweeping = false;
  const round = async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      if (settings.recoverInRounds) {
        const now = clock.now();
        const result = await recoverInvocations({ store, bus, clock }, { leaseBefore: now, publishedBefore: now - settings.republishAfterMs });
        if (result.requeued + result.republished > 0) logger.info(result, 'sweep recovered invocations');
      }
      deps.callbacks.kick();
      metrics.waitingInvocations.set(await store.invocations.countWaiting(clock.now()));
      for (const pool of settings.pools) {
        const depth = await bus.queueDepth(pool);
        if (depth !== null) metrics.queueDepth.set({ pool }, depth);
      }
    } catch (err) {
      logger.warn({ err }, 'sweep failed; next round will retry');
    } finally {
      sweeping = false;
    }
  };
  const rounds = setInterval(() => void round(), settings.intervalMs).unref();
  const expiry = setInterval(() => {
    sweepExpired(deps, settings.fileGraceMs).catch((err) => logger.warn({ err }, 'expiry sweep failed; next round will retry'));
  }, settings.expiryIntervalMs).unref();
  return () => {
    clearInterval(wakes);
    clearInterval(rounds);
    clearInterval(expiry);
  };
}

/**
 * Deletes expired invocations (MongoDB's TTL monitor does too, about once a minute), then the files of
 * expired, deleted and never-stored invocations, and the leftovers of uploads a crash cut short.
 */
async function sweepExpired(deps: SweeperDeps, fileGraceMs: number): Promise<void> {
  const now = deps.clock.now();
  const invocations = await deps.store.invocations.deleteExpired(now);
  const files = await sweepFiles({ files: deps.files, invocations: deps.store.invocations }, now - fileGraceMs);
  if (invocations + files.owners + files.abandoned > 0) deps.logger.info({ invocations, ...files }, 'deleted expired invocations and their files');
}
