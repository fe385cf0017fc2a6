import { Deadlines, isTerminal, outcomeOf, runLimitsOf, UnrecordableOutcome, unrecordableOutcome } from '@gi/domain';
import { completionEvent } from '@gi/contracts';
import type { JobDecision, JobDelivery, JobMessage } from '@gi/contracts';
import { SecretUnreadable } from '@gi/auth';
import type { Cancellation, ClaimedInvocation, Completion, FileEntity, InvocationError, InvocationRef, LogLine, Outcome, RunSecrets, WaitReason, WebhookEntity } from '@gi/domain';
import { traceContextOf } from '@gi/observability';
import { announceRecorded, connectorFileReader, replyCancelled } from '@gi/use-cases';
import { finishedFacts, giveUp } from './announce-outcome';
import { durableRunOf } from './durable-run';
import type { JournalFailure } from './durable-run';
import { handling } from './invocation-in-hand';
import { LiveLogWriter } from './live-log-writer';
import { RunLog } from './run-log';
import { inRunSpan, noteOutcome } from './run-span';
import { RunningInvocations } from './running-invocations';
import { suspendRun } from './suspend-run';
import type { ExecutorDeps } from './executor-deps';

/**
 * Runs one job: claim the invocation (conditional update with a lease), run its connector at the
 * version pinned when it was accepted, record the outcome once, and announce it. A job of an
 * invocation that is already finished (or cancelled) only re-announces it. The run stops at once when
 * the invocation is cancelled (`running` hears it from the bus) or its lease is lost (the heartbeat
 * finds it Cancelled or taken over, or could not renew it before it ran out, the store being out of
 * reach): its outcome could no longer be recorded, and another executor may be running it.
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
    const { store, clock, logger, ownerId, leaseMs } = deps;
    const invocation = await store.invocations.claim(ref, ownerId, leaseMs, clock.now());
    if (!invocation) {
      const current = await store.invocations.get(ref);
      if (current?.outcome && isTerminal(current.status) && current.finishedAt !== null) {
        const event = completionEvent(ref, current.status, finishedFacts(current, current.outcome, current.finishedAt));
        return await announceRecorded(deps, event, logger.child({ invocationId: ref.id, botId: ref.botId }), delivery);
      }
      // Unknown or expired: nothing to do. Leased by another executor: it finishes it, or the sweeper requeues it.
      return 'ack';
    }
    return await handling(ref, invocation.attempt - invocation.progressAttempt, () => inRunSpan(invocation, () => runClaimed(deps, ref, invocation, run, running, delivery)));
  } finally {
    running.done(ref, run);
  }
}

/** The next heartbeat of each run going on in this process, on one timer for them all. */
const leaseRenewals = new Deadlines<() => void>((heartbeat) => heartbeat());

/** Runs a claimed invocation's connector, records the outcome and announces it. */
async function runClaimed(
  deps: ExecutorDeps,
  ref: InvocationRef,
  invocation: ClaimedInvocation,
  run: Cancellation,
  running: RunningInvocations,
  delivery?: JobDelivery,
): Promise<JobDecision> {
  const { store, clock, ownerId, leaseMs } = deps;
  const log = new RunLog(deps.logger, invocation);
  if (invocation.attempt - invocation.progressAttempt > deps.maxAttempts) {
    const detail = `The job was started ${deps.maxAttempts} times and never finished (its executor stopped each time); it is not retried again.`;
    try {
      await giveUp(deps, ref, detail, delivery);
      return 'ack';
    } catch (err) {
      // Recorded but not announced (the redelivery finds it finished and announces it), or not recorded.
      log.warn({ err }, 'giving up could not be recorded or announced; the job is requeued');
      return 'requeue';
    }
  }
  const integration = await deps.versions.get(ref.botId, invocation.integrationId, invocation.integrationVersion);
  let outcome: Outcome | undefined;
  let logs: LogLine[] = [];
  let suspended: { wait: WaitReason; activeMs: number } | undefined;
  let journalled = invocation.steps;
  // Why the run was stopped unrecorded: its lease was lost (taken over, or expired unrenewed), or its
  // journal could not be written (then another executor may hold it too, or the store failed).
  let leaseLost: 'taken' | 'expired' | JournalFailure | undefined;
  const loseLease = (why: NonNullable<typeof leaseLost>) => {
    if (run.requested) return;
    leaseLost = why;
    run.request();
  };
  // Until when the lease is known to be held: from the time each renewal that succeeded was asked.
  let heldUntil = invocation.leaseUntil ?? clock.now() + leaseMs;
  const renewEvery = Math.max(1000, leaseMs / 3);
  // The ticket of the next heartbeat, deleted when the run ends.
  let renewal = 0;
  const heartbeat = () => {
    renewal = leaseRenewals.add(heartbeat, performance.now() + renewEvery);
    const asked = clock.now();
    // The store out of reach (a partition) for the whole lease: another executor may run it now.
    if (asked >= heldUntil) return loseLease('expired');
    store.invocations.renewLease(ref, ownerId, leaseMs, asked).then(
      (held) => {
        if (held) heldUntil = Math.max(heldUntil, asked + leaseMs);
        else loseLease('taken');
      },
      (err) => log.warn({ err, heldUntil: new Date(heldUntil).toISOString() }, 'lease renewal failed; the run stops if the lease runs out unrenewed'),
    );
  };
  // Made for the first lines the run hands over while it goes on: a run that ends sooner writes none.
  const live: { log?: LiveLogWriter } = {};
  const newLiveLog = () =>
    new LiveLogWriter({
      attempt: invocation.attempt,
      append: (batch) => store.invocations.appendLogs(ref, ownerId, batch),
      onError: (err) => log.warn({ err }, 'log lines of the running invocation not written yet; they are tried again'),
    });
  const onLogs = (lines: LogLine[]) => (live.log ??= newLiveLog()).offer(lines);
  const { metrics } = deps;
  const { pool } = invocation;
  metrics.jobsInFlight.inc({ pool });
  // The wait of the first run only: a later attempt's time since acceptance includes the runs cut short.
  if (invocation.attempt === 1) metrics.queueWait.observe({ pool }, Math.max(0, clock.now() - invocation.createdAt) / 1000);
  const started = performance.now();
  renewal = leaseRenewals.add(heartbeat, started + renewEvery);
  try {
    const secrets = integration && (await runSecrets(deps, ref.botId, integration.integrationId, log));
    if (!integration || !secrets) {
      outcome = { status: 'Failed', error: { code: 'internal', title: 'Integration missing', detail: 'The integration version this invocation was accepted for no longer exists.' } };
    } else if ('error' in secrets) {
      outcome = { status: 'Failed', error: secrets.error };
    } else {
      const timeoutMs = integration.timeoutSeconds * 1000;
      // The wall-time limit counts the time the run was active: the attempts that suspended, and this one.
      const leftMs = timeoutMs - invocation.activeMs;
      const journal = await durableRunOf(deps, invocation, deps.durable, (why, err) => {
        if (why === 'store-failed') log.warn({ err }, 'the journal could not be written; the run stops unrecorded and is tried again');
        loseLease(why);
      });
      deps.beforeRun?.(invocation);
      const result = await deps.runtime.run({
        cacheKey: `${ref.botId}/${integration.integrationId}@${integration.version}`,
        tenant: ref.botId,
        code: integration.code,
        entityJson: invocation.entityJson,
        rawBody: invocation.rawBody,
        inbound: invocation.inbound ?? null,
        secrets: secrets.values,
        timeoutMs: Math.max(0, leftMs),
        durable: journal.durable,
        limits: runLimitsOf(integration.limits),
        allowedHosts: integration.allowedHosts,
        onProgress: (progress) => void store.invocations.setProgress(ref, ownerId, progress).catch(() => undefined),
        onLogs,
        readFile: connectorFileReader(deps.files, ref, requestFilesOf(invocation), log),
        cancel: run,
        trace: traceContextOf(),
      });
      logs = result.logs;
      journalled = journal.steps();
      if (result.kind !== 'suspended') outcome = outcomeOf(result, timeoutMs);
      else if (result.wait.until <= invocation.createdAt + deps.durable.maxLifetimeMs) suspended = { wait: result.wait, activeMs: invocation.activeMs + result.durationMs };
      else outcome = lifetimeExceeded(result.wait, deps.durable.maxLifetimeMs);
    }
  } finally {
    leaseRenewals.delete(renewal);
    metrics.jobsInFlight.dec({ pool });
    // What was not written while the run went on is recorded with its outcome, after what was (a
    // suspended run stores it now, before it gives up its lease).
    if (live.log && !suspended) logs = [...(await live.log.close()), ...logs];
  }
  if (suspended && !leaseLost) {
    metrics.jobDuration.observe({ pool, status: 'Waiting' }, (performance.now() - started) / 1000);
    const writer = (live.log ??= newLiveLog());
    if (!(await writer.flush(logs))) log.warn('log lines of the suspending run could not all be stored');
    return suspendRun(deps, invocation, suspended.wait, suspended.activeMs, log, delivery);
  }
  // A suspension asked for after the lease was lost (or the journal failed) is a stop like any other.
  outcome ??= { status: 'Cancelled', error: { code: 'cancelled', title: 'Run stopped', detail: 'The run was stopped.' } };
  metrics.jobDuration.observe({ pool, status: outcome.status }, (performance.now() - started) / 1000);
  noteOutcome(outcome);
  if (outcome.status === 'Cancelled') {
    // Nothing to record: the store holds the cancellation (whoever cancelled announced it), or another
    // executor holds the lease.
    if (leaseLost === 'expired') log.warn('run stopped: its lease ran out while the store could not be reached to renew it');
    else if (leaseLost === 'store-failed') log.warn('run stopped: its journal could not be written; it runs again once its lease ends');
    else if (leaseLost) log.warn('run stopped: its lease was lost (the invocation was cancelled or taken over)');
    else if (running.isHandedBack(run)) return handBack(deps, ref, log);
    else {
      log.info('run stopped: the invocation was cancelled');
      await replyCancelled(deps, ref, delivery);
    }
    return 'ack';
  }
  metrics.outcomes.inc({ pool, status: outcome.status, code: outcome.status === 'Failed' ? outcome.error.code : 'ok' });
  const { bot, integration: integrationLabel } = metrics.integrationLabels.of(ref.botId, invocation.integrationId);
  metrics.integrationOutcomes.inc({ bot, integration: integrationLabel, status: outcome.status });

  if (journalled > 0) metrics.stepsPerInvocation.observe(journalled);
  const decision = await finish(deps, invocation, outcome, logs, log, delivery);
  if (invocation.callback) deps.callbacks?.kick();
  return decision;
}

/** The failure of a run that asked to wait past its invocation's lifetime. */
function lifetimeExceeded(wait: WaitReason, maxLifetimeMs: number): Outcome {
  const days = Math.round(maxLifetimeMs / 86_400_000);
  const detail = `The run asked to wait (${wait.kind} '${wait.name.slice(0, 100)}') until ${new Date(wait.until).toISOString()}, past the invocation's lifetime limit of ${days} day(s) from its acceptance (INVOCATION_MAX_LIFETIME_DAYS).`;
  return { status: 'Failed', error: { code: 'connector_failed', title: 'Lifetime exceeded', detail } };
}

/**
 * A run stopped because its executor stops and its drain deadline passed: nothing is recorded, the lease
 * is released (the invocation is Queued again at once) and the job goes back to the queue, so another
 * executor takes it now, as a new attempt. Released only once the run has stopped: two runs of it never
 * overlap. A store out of reach leaves the lease to lapse; the sweepers requeue it then.
 */
async function handBack(deps: ExecutorDeps, ref: InvocationRef, log: RunLog): Promise<JobDecision> {
  try {
    const released = await deps.store.invocations.releaseLease(ref, deps.ownerId);
    log.warn({ released }, 'run handed back: the executor is stopping and its drain deadline passed');
  } catch (err) {
    log.warn({ err }, 'run handed back, but its lease could not be released; it runs again once the lease lapses');
  }
  return 'requeue';
}

/** RequestFiles of a file transfer's entity; other calls carry no files, and their entity is not parsed here. */
function requestFilesOf(invocation: ClaimedInvocation): FileEntity[] | undefined {
  return invocation.endpoint === 'GenericIntegrationFileTransfer' ? (JSON.parse(invocation.entityJson) as WebhookEntity).RequestFiles : undefined;
}

/**
 * Records the outcome (only the lease owner can) and announces it. An outcome the store cannot hold
 * is recorded as a failure saying so: the invocation never stays Running for want of a result. Once
 * the outcome is recorded the job is done; an announcement that fails (the broker restarting) is
 * made again by the job's redelivery, which finds the invocation finished and only announces it.
 */
async function finish(deps: ExecutorDeps, invocation: ClaimedInvocation, outcome: Outcome, logs: LogLine[], log: RunLog, delivery?: JobDelivery): Promise<JobDecision> {
  let recorded = outcome;
  let completed: Completion | null;
  let finishedAt = deps.clock.now();
  try {
    completed = await deps.store.invocations.complete(invocation, deps.ownerId, outcome, logs, finishedAt);
  } catch (err) {
    // Anything else (the store unavailable) fails the job, which is requeued.
    if (!(err instanceof UnrecordableOutcome)) throw err;
    log.error({ err }, 'the outcome could not be recorded; the invocation is recorded as Failed instead');
    recorded = unrecordableOutcome;
    finishedAt = deps.clock.now();
    completed = await deps.store.invocations.complete(invocation, deps.ownerId, recorded, logs, finishedAt);
  }
  if (!completed) {
    log.warn('lease lost before completion; the outcome of this attempt was discarded');
    return 'ack';
  }
  // Successes are counted in metrics; one log line each would cost more than the run at high volume.
  if (recorded.status === 'Completed') log.debug({ status: recorded.status }, 'invocation finished');
  else log.info({ status: recorded.status, code: recorded.error.code, title: recorded.error.title }, 'invocation finished');
  const event = completionEvent(invocation, recorded.status, finishedFacts(invocation, recorded, finishedAt));
  return announceRecorded(deps, event, log, delivery, completed.watched);
}

/**
 * The run's secrets in clear; a failure to record instead when they cannot be opened (no key, or a key
 * that is not theirs): the run would otherwise go on without them. The store failing is thrown (the job
 * is requeued).
 */
async function runSecrets(deps: ExecutorDeps, botId: string, integrationId: string, log: RunLog): Promise<{ values: RunSecrets } | { error: InvocationError }> {
  if (!deps.secrets) return { values: {} };
  try {
    return { values: await deps.secrets.forRun(botId, integrationId) };
  } catch (err) {
    if (!(err instanceof SecretUnreadable)) throw err;
    log.error({ err }, 'the integration\'s secrets cannot be opened; the invocation fails');
    return { error: { code: 'internal', title: 'Secrets unreadable', detail: `The integration's secrets cannot be decrypted with the service's key: ${err.message}` } };
  }
}
