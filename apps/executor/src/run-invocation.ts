import { isTerminal, outcomeOf, runLimitsOf } from '@gi/domain';
import type { Clock, ConnectorRuntime, FileStore, InvocationRef, JobBus, JobDecision, JobDelivery, JobMessage, LogLine, Outcome, Store } from '@gi/domain';
import type { Logger, Metrics } from '@gi/http';
import { connectorFileReader } from './connector-files';
import { RunningInvocations } from './running-invocations';
import type { IntegrationVersions } from './integration-versions';

export interface ExecutorDeps {
  store: Store;
  bus: JobBus;
  runtime: ConnectorRuntime;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Identifies this executor as a lease owner. */
  ownerId: string;
  /** Lease length; renewed every third of it while the run goes on. */
  leaseMs: number;
  /** Runs started for one invocation before it is given up as Failed (each interrupted by a crash). */
  maxAttempts: number;
  /** Where uploaded files are kept, for `Context.ReadFile`; without it connectors cannot read files. */
  files?: FileStore;
  /** Told when an invocation with a callback finished, so it is delivered at once. */
  callbacks?: { kick(): void };
  /** The deployed versions this executor has run (read from `store.catalog` once each). */
  versions: IntegrationVersions;
}

/**
 * Runs one job: claim the invocation (conditional update with a lease), run its connector at the
 * version pinned when it was accepted, record the outcome once, and announce it. A job of an
 * invocation that is already finished (or cancelled) only re-announces it. The run stops at once when
 * the invocation is cancelled (`running` hears it from the bus) or its lease is lost (the heartbeat
 * finds it Cancelled or taken over): its outcome could no longer be recorded.
 */
export async function runInvocation(
  deps: ExecutorDeps,
  job: JobMessage,
  delivery?: JobDelivery,
  running: RunningInvocations = new RunningInvocations(),
): Promise<JobDecision> {
  const ref = { botId: job.botId, id: job.invocationId };
  // Registered before the claim: a cancellation heard while the run is being set up still stops it.
  const run = running.start(ref);
  try {
    return await claimAndRun(deps, ref, run, delivery);
  } finally {
    run.done();
  }
}

async function claimAndRun(deps: ExecutorDeps, ref: InvocationRef, run: { signal: AbortSignal; stop: () => void }, delivery?: JobDelivery): Promise<JobDecision> {
  const { store, clock, logger, ownerId, leaseMs } = deps;
  const invocation = await store.invocations.claim(ref, ownerId, leaseMs, clock.now());
  if (!invocation) {
    const current = await store.invocations.get(ref);
    if (current && isTerminal(current.status)) await announce(deps, ref, current.status, delivery);
    // Unknown or expired: nothing to do. Leased by another executor: it finishes it, or the sweeper requeues it.
    return 'ack';
  }

  const log = logger.child({ invocationId: ref.id, botId: ref.botId, attempt: invocation.attempt });
  const finishWith = async (outcome: Outcome, logs: LogLine[]) => {
    const decision = await finish(deps, ref, outcome, logs, log, delivery);
    if (invocation.callback) deps.callbacks?.kick();
    return decision;
  };
  if (invocation.attempt > deps.maxAttempts) {
    const detail = `The job was started ${deps.maxAttempts} times and never finished (its executor stopped each time); it is not retried again.`;
    return finishWith({ status: 'Failed', error: { code: 'connector_failed', title: 'Gave up', detail } }, []);
  }
  const integration = await deps.versions.get(ref.botId, invocation.integrationId, invocation.integrationVersion);
  let outcome: Outcome;
  let logs: LogLine[] = [];
  let leaseLost = false;
  const heartbeat = setInterval(() => {
    store.invocations.renewLease(ref, ownerId, leaseMs, clock.now()).then(
      (held) => {
        if (held || run.signal.aborted) return;
        leaseLost = true;
        run.stop();
      },
      (err) => log.warn({ err }, 'lease renewal failed'),
    );
  }, Math.max(1000, leaseMs / 3));
  const inFlight = deps.metrics.jobsInFlight.labels(invocation.pool);
  inFlight.inc();
  const endTimer = deps.metrics.jobDuration.startTimer({ pool: invocation.pool });
  try {
    if (!integration) {
      outcome = { status: 'Failed', error: { code: 'internal', title: 'Integration missing', detail: 'The integration version this invocation was accepted for no longer exists.' } };
    } else {
      const timeoutMs = integration.timeoutSeconds * 1000;
      const result = await deps.runtime.run({
        cacheKey: `${ref.botId}/${integration.integrationId}@${integration.version}`,
        code: integration.code,
        entity: invocation.entity,
        timeoutMs,
        limits: runLimitsOf(integration.limits),
        allowedHosts: integration.allowedHosts,
        onProgress: (progress) => void store.invocations.setProgress(ref, ownerId, progress).catch(() => undefined),
        readFile: connectorFileReader(deps.files, ref, invocation.entity.RequestFiles, log),
        signal: run.signal,
      });
      outcome = outcomeOf(result, timeoutMs);
      logs = result.logs;
    }
  } finally {
    clearInterval(heartbeat);
    inFlight.dec();
  }
  endTimer({ status: outcome.status });
  if (outcome.status === 'Cancelled') {
    // Nothing to record: the store holds the cancellation (whoever cancelled announced it), or another
    // executor holds the lease.
    if (leaseLost) log.warn('run stopped: its lease was lost (the invocation was cancelled or taken over)');
    else log.info('run stopped: the invocation was cancelled');
    return 'ack';
  }
  deps.metrics.outcomes.inc({ status: outcome.status, code: outcome.status === 'Failed' ? outcome.error.code : 'ok' });

  return finishWith(outcome, logs);
}

/** Records the outcome (only the lease owner can) and announces it. */
async function finish(deps: ExecutorDeps, ref: InvocationRef, outcome: Outcome, logs: LogLine[], log: Logger, delivery?: JobDelivery): Promise<JobDecision> {
  if (await deps.store.invocations.complete(ref, deps.ownerId, outcome, logs, deps.clock.now())) {
    // Successes are counted in metrics; one log line each would cost more than the run at high volume.
    log[outcome.status === 'Completed' ? 'debug' : 'info']({ status: outcome.status }, 'invocation finished');
    await announce(deps, ref, outcome.status, delivery);
  } else {
    log.warn('lease lost before completion; the outcome of this attempt was discarded');
  }
  return 'ack';
}

/**
 * Announces a finished invocation: to every listener (long polls) and, for a sync call, straight back
 * to the waiting gateway. A lost direct reply costs that caller one store read at the end of its wait.
 */
async function announce(deps: ExecutorDeps, ref: InvocationRef, status: Outcome['status'], delivery?: JobDelivery) {
  const event = { kind: 'completed' as const, version: 1 as const, botId: ref.botId, invocationId: ref.id, status };
  if (delivery?.replyTo) await deps.bus.reply(delivery.replyTo, event).catch((err) => deps.logger.warn({ err, invocationId: ref.id }, 'direct reply not sent'));
  await deps.bus.publishCompletion(event);
}
