import { createHash } from 'node:crypto';
import { badRequest, DEFAULT_REPLAY_REQUESTS, MAX_REPLAY_REQUESTS, notFound, outcomeOf, runLimitsOf, unifiedDiff } from '@gi/domain';
import type { ConnectorRuntime, FileStore, Invocation, InvocationError, InvocationStatus, IntegrationDraft, LogLine, Outcome, ReplayOutbound, RunSecrets, Store } from '@gi/domain';
import { connectorFileReader } from './connector-files';
import type { FileReadLog } from './connector-files';

/** Runs of one replay in the sandbox at once: a replay of 50 never takes every sandbox thread. */
export const REPLAY_CONCURRENCY = 4;

/** The message every HTTP request of a replay with outbound `block` fails with. */
export const BLOCKED_HTTP_MESSAGE = 'Outbound HTTP is blocked in this replay (outbound: block); replay with outbound: send to let the draft reach its allowed hosts.';

export interface ReplayDeps {
  store: Pick<Store, 'catalog' | 'invocations'>;
  /** The same sandbox live runs use. */
  runtime: Pick<ConnectorRuntime, 'run'>;
  /** The integration's secrets in clear, as a live run gets them (`Context.Secrets`). */
  secretsForRun(botId: string, integrationId: string): Promise<RunSecrets>;
  /** Where uploaded files are kept (`Context.ReadFile` of a replayed file transfer); without it the draft reads none. */
  files?: FileStore;
  /** Where a failed file read is logged (the draft is told only that it failed). */
  log: FileReadLog;
}

/** Which stored requests to re-run: the integration's latest `last`, or the invocations named by `ids`. */
export interface ReplayRequest {
  last?: number;
  ids?: string[];
  outbound: ReplayOutbound;
}

/** One side of a replayed request: what was answered and how long the run took. */
export interface ReplaySide {
  status: InvocationStatus;
  responseBody: unknown;
  error: InvocationError | null;
  /** Run time in ms; null for a stored request that has not run yet. */
  durationMs: number | null;
}

export interface ReplayedRequest {
  invocationId: string;
  createdAt: number;
  /** As stored: the outcome of the version the request was accepted for (`version`). */
  published: ReplaySide & { version: number };
  draft: ReplaySide & { logs: LogLine[] };
  /** Unified line diff of the two answers (ResponseBody as indented JSON, or the error); empty when they are the same. */
  diff: string;
}

export interface ReplayReport {
  integrationId: string;
  /** The live version when the replay ran. */
  publishedVersion: number;
  draftedAt: number;
  outbound: ReplayOutbound;
  /** How many answers differ. */
  changed: number;
  replayed: ReplayedRequest[];
}

/**
 * Re-runs stored requests of an integration against its draft, in the sandbox live runs use, with the
 * draft's limits, allowed hosts and the integration's secrets. Reads invocations and writes nothing:
 * stored invocations stay as they are, no callback is due, and no quota (which counts invocations and
 * webhook calls) is touched.
 */
export async function replayDraft(deps: ReplayDeps, botId: string, integrationId: string, request: ReplayRequest): Promise<ReplayReport> {
  const live = await deps.store.catalog.resolveIntegration(botId, integrationId);
  if (!live) throw notFound(`No integration '${integrationId}' for bot '${botId}'.`);
  const draft = await deps.store.catalog.getDraft(botId, integrationId);
  if (!draft) throw notFound(`Integration '${integrationId}' of bot '${botId}' has no draft; deploy one first (gi connector deploy --draft).`);
  const invocations = await storedRequests(deps, botId, integrationId, request);
  const secrets = await deps.secretsForRun(botId, integrationId);
  const replayed = await mapWithConcurrency(invocations, REPLAY_CONCURRENCY, (invocation) => replayOne(deps, draft, invocation, secrets, request.outbound));
  return {
    integrationId,
    publishedVersion: live.version,
    draftedAt: draft.draftedAt,
    outbound: request.outbound,
    changed: replayed.filter((r) => r.diff !== '').length,
    replayed,
  };
}

function checkCount(count: number, what: string): void {
  if (!Number.isInteger(count) || count < 1 || count > MAX_REPLAY_REQUESTS) {
    throw badRequest(`A replay re-runs 1 to ${MAX_REPLAY_REQUESTS} stored requests; ${what} asked for ${count}.`);
  }
}

async function storedRequests(deps: ReplayDeps, botId: string, integrationId: string, request: ReplayRequest): Promise<Invocation[]> {
  if (request.ids !== undefined && request.last !== undefined) throw badRequest('Give either last or ids, not both.');
  if (request.ids !== undefined) {
    const ids = [...new Set(request.ids)];
    checkCount(ids.length, 'ids');
    const found = await Promise.all(ids.map((id) => deps.store.invocations.get({ botId, id })));
    const missing = ids.filter((_, i) => found[i]?.integrationId !== integrationId);
    if (missing.length > 0) {
      throw notFound(`No stored request of integration '${integrationId}' has the id ${missing.map((id) => `'${id.slice(0, 80)}'`).join(', ')} (unknown, expired, or of another integration).`);
    }
    return found as Invocation[];
  }
  const last = request.last ?? DEFAULT_REPLAY_REQUESTS;
  checkCount(last, 'last');
  const summaries = await deps.store.invocations.list(botId, { integrationId, limit: last });
  const found = await Promise.all(summaries.map((s) => deps.store.invocations.get({ botId, id: s.id })));
  // One that expired between the listing and the read is left out.
  return found.filter((invocation): invocation is Invocation => invocation !== null);
}

async function replayOne(deps: ReplayDeps, draft: IntegrationDraft, invocation: Invocation, secrets: RunSecrets, outbound: ReplayOutbound): Promise<ReplayedRequest> {
  const timeoutMs = draft.timeoutSeconds * 1000;
  const result = await deps.runtime.run({
    cacheKey: `${draft.botId}/${draft.integrationId}@draft-${codeHash(draft.code)}`,
    code: draft.code,
    entity: invocation.entity,
    rawBody: invocation.rawBody,
    inbound: invocation.inbound ?? null,
    secrets,
    timeoutMs,
    limits: runLimitsOf(draft.limits),
    allowedHosts: draft.allowedHosts,
    ...(outbound === 'block' && { blockedHttp: BLOCKED_HTTP_MESSAGE }),
    readFile: connectorFileReader(deps.files, invocation, invocation.entity.RequestFiles, deps.log),
    // No durable journal: steps run against the draft and are kept in memory, and nothing sleeps.
    sleeps: 'skip',
  });
  // Without a journal nothing can suspend; the check narrows the type.
  if (result.kind === 'suspended') throw new Error('A replay ran without a journal, so it cannot suspend.');
  const outcome = outcomeOf(result, timeoutMs);
  const published: ReplaySide & { version: number } = {
    version: invocation.integrationVersion,
    ...sideOf(invocation.outcome, invocation.status),
    durationMs: invocation.startedAt !== null && invocation.finishedAt !== null ? invocation.finishedAt - invocation.startedAt : null,
  };
  const replayed: ReplaySide & { logs: LogLine[] } = { ...sideOf(outcome, outcome.status), durationMs: result.durationMs, logs: result.logs };
  const diff = unifiedDiff(answerText(published), answerText(replayed), { before: `published v${invocation.integrationVersion}`, after: 'draft' });
  return { invocationId: invocation.id, createdAt: invocation.createdAt, published, draft: replayed, diff };
}

function sideOf(outcome: Outcome | null, status: InvocationStatus): Omit<ReplaySide, 'durationMs'> {
  if (!outcome) return { status, responseBody: null, error: null };
  return outcome.status === 'Completed' ? { status, responseBody: outcome.responseBody, error: null } : { status, responseBody: null, error: outcome.error };
}

/** What a side answered, as lines to diff: its ResponseBody as indented JSON, or its status and error. */
function answerText(side: Omit<ReplaySide, 'durationMs'>): string {
  if (side.status === 'Completed') return `${JSON.stringify(side.responseBody ?? null, null, 2)}\n`;
  return side.error ? `${side.status}: ${side.error.title}\n${side.error.detail}\n` : `${side.status}\n`;
}

/** The draft's code names its compiled form in the sandbox's cache: a new draft never runs an old one's. */
const codeHash = (code: string) => createHash('sha256').update(code).digest('hex').slice(0, 16);

/** Maps every item with at most `limit` calls of `fn` at once, keeping the items' order. */
async function mapWithConcurrency<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
