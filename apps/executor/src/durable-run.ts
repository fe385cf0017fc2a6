import { context, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';
import { JournalLimitExceeded } from '@gi/domain';
import type { ClaimedInvocation, Clock, DurableRun, JournalEntry, JournalLimits, Store } from '@gi/domain';
import { giTracer, tracingEnabled } from '@gi/observability';
import type { Metrics } from '@gi/observability';

/** How durable runs behave in this deployment (settings; docs/operations.md). */
export interface DurableSettings {
  /** A wait with more than this left suspends the run (SUSPEND_AFTER_SECONDS). */
  suspendAfterMs: number;
  /** The longest an invocation may live, waits included (INVOCATION_MAX_LIFETIME_DAYS). */
  maxLifetimeMs: number;
  /** How long a finished invocation is kept (INVOCATION_TTL_HOURS): a waiting one is kept that much past its lifetime. */
  invocationTtlMs: number;
  limits: JournalLimits;
}

/** Why a journal write could not be made: the run stops, unrecorded, and its job is handed back. */
export type JournalFailure = 'lease-lost' | 'store-failed';

/**
 * The journal of one attempt's run (`ConnectorRunRequest.durable`): read once, only when the
 * invocation has one (most runs make no step and pay nothing), and written through the store under
 * the attempt's lease. A limit the store refuses fails the step with its message; a write the lease no
 * longer allows, or a store that fails, stops the run (`onFailure`): a step's result that cannot be
 * journalled must not be acted on, and another executor may hold the invocation by then.
 */
export async function durableRunOf(
  deps: { store: Store; metrics: Metrics; ownerId: string; clock: Clock },
  invocation: ClaimedInvocation,
  settings: DurableSettings,
  onFailure: (why: JournalFailure, error?: unknown) => void,
): Promise<{ durable: DurableRun; steps: () => number }> {
  const ref = { botId: invocation.botId, id: invocation.id };
  const lease = { owner: deps.ownerId, attempt: invocation.attempt };
  const { journal: store } = deps.store;
  const { limits } = settings;
  const journal = invocation.steps > 0 ? await store.read(ref) : [];
  // The entries the journal holds, those this run wrote included (gi_steps_per_invocation).
  const keys = new Set(journal.map(keyOf));
  // Steps are spans of the run they belong to; the worker's messages reach here outside its context.
  const run = tracingEnabled() ? context.active() : null;
  const written = async (write: () => Promise<JournalEntry | null>): Promise<JournalEntry> => {
    let entry: JournalEntry | null;
    try {
      entry = await write();
    } catch (error) {
      if (error instanceof JournalLimitExceeded) throw error;
      onFailure('store-failed', error);
      throw new Error('The journal could not be written (the store failed); the run stops and is tried again.');
    }
    if (!entry) {
      onFailure('lease-lost');
      throw new Error('The run lost its lease; it stops.');
    }
    keys.add(keyOf(entry));
    deps.metrics.steps.inc({ kind: entry.kind, status: entry.status });
    if (run) stepSpan(run, entry);
    return entry;
  };
  const durable: DurableRun = {
    botId: ref.botId,
    invocationId: ref.id,
    journal,
    limits,
    suspendAfterMs: settings.suspendAfterMs,
    record: (step) => written(() => store.record(ref, lease, step, limits)),
    beginWait: (wait) => written(() => store.beginWait(ref, lease, wait, limits)),
    timeOut: (step) => written(() => store.timeOut(ref, lease, step, deps.clock.now())),
  };
  return { durable, steps: () => keys.size };
}

const keyOf = (entry: Pick<JournalEntry, 'name' | 'occurrence'>) => `${entry.occurrence}:${entry.name}`;

/** A journalled step as a span of its run, from its start to what was just written (its end, or a wait begun). */
function stepSpan(parent: Context, entry: JournalEntry): void {
  const span = giTracer().startSpan(
    `step ${entry.name}`,
    {
      kind: SpanKind.INTERNAL,
      startTime: entry.startedAt,
      attributes: { 'gi.step.name': entry.name, 'gi.step.occurrence': entry.occurrence, 'gi.step.kind': entry.kind, 'gi.step.status': entry.status, 'gi.step.attempts': entry.attempts },
    },
    parent,
  );
  if (entry.status === 'failed' || entry.status === 'retrying') span.setStatus({ code: SpanStatusCode.ERROR, message: entry.error?.name });
  span.end(entry.finishedAt ?? Date.now());
}

/** When a waiting invocation may be deleted at the earliest: its lifetime, and then as long as a finished one is kept. */
export const keepWaitingUntil = (invocation: Pick<ClaimedInvocation, 'createdAt'>, settings: DurableSettings): number =>
  invocation.createdAt + settings.maxLifetimeMs + settings.invocationTtlMs;
