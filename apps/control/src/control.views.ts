import { durationMs, inboundAuthOf, outcomeError, waitView } from '@gi/domain';
import type { EffectiveLimits, IntegrationDefinition, IntegrationDraft, Invocation, InvocationSummary, StepSummary, TokenRecord } from '@gi/domain';

/** What the control API shows of stored records: times as ISO text, secrets and code left out where they do not belong. */
export const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** An integration as deployed, without its code and sources (the listing and the deploy reply). */
export const deployedView = ({ code: _code, sources: _sources, ...integration }: IntegrationDefinition) => ({
  ...integration,
  inboundAuth: inboundAuthOf(integration),
  deployedAt: iso(integration.deployedAt),
});

/** A draft without its code and sources, with the live version it would replace. */
export const draftView = ({ code: _code, sources: _sources, ...draft }: IntegrationDraft, liveVersion: number) => ({
  ...draft,
  inboundAuth: inboundAuthOf(draft),
  draft: true,
  liveVersion,
  draftedAt: iso(draft.draftedAt),
});

export const summaryView = (s: InvocationSummary) => ({
  id: s.id,
  integrationId: s.integrationId,
  integrationVersion: s.integrationVersion,
  entityName: s.entityName,
  mode: s.mode,
  status: s.status,
  attempt: s.attempt,
  createdAt: iso(s.createdAt),
  startedAt: iso(s.startedAt),
  finishedAt: iso(s.finishedAt),
  durationMs: durationMs(s),
  error: s.error,
});

export function detailView(inv: Invocation) {
  return {
    ...summaryView({ ...inv, error: outcomeError(inv.outcome) }),
    pool: inv.pool,
    endpoint: inv.endpoint,
    responseContentType: inv.responseContentType,
    entity: inv.entity,
    outcome: inv.outcome,
    progress: inv.progress,
    logs: inv.logs.map((l) => ({ ...l, at: iso(l.at) })),
    inbound: inv.inbound ?? null,
    callback: inv.callback && { ...inv.callback, nextAttemptAt: iso(inv.callback.nextAttemptAt), deliveredAt: iso(inv.callback.deliveredAt) },
    expireAt: iso(inv.expireAt),
    // Durable runs (docs/connectors.md, Durable jobs): what it waits for while Waiting, its journal's size, its run time so far.
    waiting: inv.status === 'Waiting' && inv.waiting ? waitView(inv.waiting) : null,
    steps: inv.steps,
    // Whole milliseconds: the executor adds up run times measured to a fraction.
    activeMs: Math.round(inv.activeMs),
  };
}

/** One entry of a durable run's journal, without its result: only the result's size. */
export const stepView = (s: StepSummary) => ({
  name: s.name,
  occurrence: s.occurrence,
  kind: s.kind,
  status: s.status,
  attempts: s.attempts,
  startedAt: iso(s.startedAt),
  finishedAt: iso(s.finishedAt),
  durationMs: durationMs(s),
  until: iso(s.until),
  resultBytes: s.resultBytes,
  error: s.error,
});

/** What is enforced; null: no limit. */
export const effectiveView = ({ rate, maxInFlight }: EffectiveLimits) => ({ ratePerSecond: rate?.perSecond ?? null, burst: rate?.burst ?? null, maxInFlight });

export const tokenView = (t: TokenRecord) => ({
  tokenId: t.tokenId,
  label: t.label,
  createdAt: iso(t.createdAt),
  expiresAt: iso(t.expiresAt),
  revokedAt: iso(t.revokedAt),
});

/** A secret as the API lists it: its name and dates, never its value. */
export const secretView = (s: { name: string; createdAt: number; updatedAt: number }) => ({ name: s.name, createdAt: iso(s.createdAt), updatedAt: iso(s.updatedAt) });
