import {
  ACTIVE_STATUSES,
  assertEntityFits,
  integrationSettingsOf,
  invocationState,
  invocationSummary,
  invocationTiming,
  isSettledForRecord,
  isTerminal,
  journalBytesOf,
  journalLimitPassed,
  linesInOrder,
  pendingCallback,
  recordedOutcomeJson,
  resultBytesWithin,
  stepEntry,
  TIMED_OUT_RESULT_JSON,
  UNFINISHED_STATUSES,
  waitEntry,
  WEBHOOK_FIELDS,
  withDefaultLimits,
  withoutEmptySources,
} from '@gi/domain';
import type {
  ActiveCount,
  BotQuotas,
  CallbackShare,
  CatalogStore,
  Clock,
  EntityDefinition,
  IdempotencyRecord,
  InstanceRegistry,
  IntegrationDefinition,
  IntegrationDraft,
  IntegrationSettings,
  IntegrationTarget,
  ClaimedInvocation,
  Completion,
  EventDelivery,
  Invocation,
  InvocationError,
  InvocationListFilter,
  InvocationRef,
  StoredInvocationState,
  InvocationStore,
  InvocationSummary,
  InvocationTiming,
  JournalEntry,
  JournalLease,
  JournalLimits,
  JournalStore,
  JournalUsage,
  LogBatch,
  LogLine,
  NewInvocation,
  Outcome,
  Progress,
  Quotas,
  SecretPut,
  SecretRef,
  SecretScope,
  SecretStore,
  SigningSecret,
  Store,
  StoredSecret,
  StepRecord,
  StepSummary,
  Suspension,
  TokenRecord,
  TokenStore,
  WaitRecord,
} from '@gi/domain';

/** A copy that shares nothing with what was stored, as a real store's reads do. */
const copy = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));
const keyOf = (ref: InvocationRef) => `${ref.botId}\u0000${ref.id}`;

/** One stored invocation: what `get` returns, plus what only the store keeps. */
interface Row {
  /** As the stores keep it: the entity as its JSON text. */
  invocation: ClaimedInvocation;
  /** When its job was last published (0: never), for the sweeper. */
  publishedAt: number;
  /** When its pending callback is due (0 until the invocation finishes). */
  callbackDueAt: number;
  /** The batches its attempts appended while they ran, by `attempt/seq`. */
  batches: Map<string, LogBatch>;
  /** The lines its last attempt recorded with its outcome. */
  finalLogs: LogLine[];
  /** Some process besides a sync caller's gateway waits for it (InvocationStore.watch). */
  watched?: boolean;
  /** Its journal (durable runs), by name and occurrence, in the order first written (a Map keeps it). */
  journal: Map<string, JournalEntry>;
  /** Events sent before a wait took them, oldest first. */
  events: Array<{ name: string; payloadJson: string }>;
  /** Bytes of results, errors and kept events (JournalLimits.maxJournalBytes). */
  journalBytes: number;
  /** Its TTL as created, kept at its first suspension; null for one that never suspended. */
  retainMs: number | null;
}

const stepKey = (step: Pick<JournalEntry, 'name' | 'occurrence'>) => `${step.name}\u0000${step.occurrence}`;

/**
 * An invocation store in memory, for the small tests: it passes the store contract (libs/testing
 * store.contract.ts) like SQLite and MongoDB, so services tested against it behave as they would
 * against either.
 */
export class FakeInvocationStore implements InvocationStore {
  private readonly rows = new Map<string, Row>();
  private readonly keys = new Map<string, IdempotencyRecord>();

  constructor(private readonly clock: Clock) {}

  private live(ref: InvocationRef, now = this.clock.now()): Row | undefined {
    const row = this.rows.get(keyOf(ref));
    return row && row.invocation.expireAt > now ? row : undefined;
  }

  async create(invocation: NewInvocation): Promise<void> {
    if (this.rows.has(keyOf(invocation))) throw new Error(`An invocation '${invocation.id}' exists already.`);
    assertEntityFits(invocation.entityJson, invocation.rawBody);
    const { callbackUrl, ...stored } = copy(invocation);
    this.rows.set(keyOf(invocation), {
      invocation: {
        ...stored,
        inbound: stored.inbound ?? null,
        status: 'Queued',
        attempt: 0,
        leaseOwner: null,
        leaseUntil: null,
        startedAt: null,
        finishedAt: null,
        outcome: null,
        logs: [],
        progress: null,
        callback: pendingCallback(callbackUrl),
        waiting: null,
        steps: 0,
        activeMs: 0,
        progressAttempt: 0,
      },
      publishedAt: invocation.createdAt,
      callbackDueAt: 0,
      batches: new Map(),
      finalLogs: [],
      journal: new Map(),
      events: [],
      journalBytes: 0,
      retainMs: null,
    });
  }

  async createWithKey(invocation: NewInvocation, record: IdempotencyRecord): Promise<IdempotencyRecord | null> {
    const key = `${record.botId}\u0000${record.key}`;
    const holder = this.keys.get(key);
    if (holder && holder.expireAt > record.createdAt) return { ...holder };
    // Taken before anything is awaited: of concurrent creates with one key, exactly one gets here.
    this.keys.set(key, { ...record });
    try {
      await this.create(invocation);
    } catch (error) {
      if (holder) this.keys.set(key, holder);
      else this.keys.delete(key);
      throw error;
    }
    return null;
  }

  async get(ref: InvocationRef): Promise<Invocation | null> {
    const row = this.live(ref);
    if (!row) return null;
    const batches = [...row.batches.values()].sort((a, b) => a.attempt - b.attempt || a.seq - b.seq);
    const logs = linesInOrder(batches, { attempt: row.invocation.attempt, lines: row.finalLogs });
    const { entityJson, ...stored } = row.invocation;
    return copy({ ...stored, entity: JSON.parse(entityJson), logs });
  }

  async getState(ref: InvocationRef): Promise<StoredInvocationState | null> {
    const row = this.live(ref);
    if (!row) return null;
    return copy(invocationState(row.invocation));
  }

  async watch(ref: InvocationRef): Promise<StoredInvocationState | null> {
    const row = this.live(ref);
    if (row) row.watched = true;
    return this.getState(ref);
  }

  async claim(ref: InvocationRef, owner: string, leaseMs: number, now: number): Promise<ClaimedInvocation | null> {
    const row = this.live(ref, now);
    if (!row) return null;
    const inv = row.invocation;
    const claimable = inv.status === 'Queued' || (inv.status === 'Running' && inv.leaseUntil !== null && inv.leaseUntil < now);
    if (!claimable) return null;
    Object.assign(inv, { status: 'Running', attempt: inv.attempt + 1, leaseOwner: owner, leaseUntil: now + leaseMs, startedAt: now, progress: null });
    return copy({ ...inv, logs: [] });
  }

  private leased(ref: InvocationRef, owner: string): Row | undefined {
    const row = this.rows.get(keyOf(ref));
    return row && row.invocation.status === 'Running' && row.invocation.leaseOwner === owner ? row : undefined;
  }

  /** The invocation while the run at `lease.attempt` holds its lease (FakeJournalStore writes under it). */
  leasedAttempt(ref: InvocationRef, lease: JournalLease): Row | undefined {
    const row = this.leased(ref, lease.owner);
    return row?.invocation.attempt === lease.attempt ? row : undefined;
  }

  /** The stored row of an invocation whatever its state (FakeJournalStore reads its journal). */
  rowOf(ref: InvocationRef): Row | undefined {
    return this.rows.get(keyOf(ref));
  }

  async renewLease(ref: InvocationRef, owner: string, leaseMs: number, now: number): Promise<boolean> {
    const row = this.leased(ref, owner);
    if (row) row.invocation.leaseUntil = now + leaseMs;
    return row !== undefined;
  }

  async setProgress(ref: InvocationRef, owner: string, progress: Progress): Promise<void> {
    const row = this.leased(ref, owner);
    if (row) row.invocation.progress = copy(progress);
  }

  async appendLogs(ref: InvocationRef, owner: string, batch: LogBatch): Promise<boolean> {
    const row = this.leased(ref, owner);
    if (!row || row.invocation.attempt !== batch.attempt) return false;
    const key = `${batch.attempt}/${batch.seq}`;
    if (!row.batches.has(key)) row.batches.set(key, copy(batch));
    return true;
  }

  async complete(ref: InvocationRef, owner: string, outcome: Outcome, logs: LogLine[], now: number): Promise<Completion | null> {
    const recorded = JSON.parse(recordedOutcomeJson(outcome, logs)) as Outcome;
    const row = this.leased(ref, owner);
    if (!row) return null;
    this.finish(row, recorded, now);
    row.finalLogs = copy(logs);
    return { watched: row.watched === true };
  }

  private finish(row: Row, outcome: Outcome, now: number): void {
    Object.assign(row.invocation, { status: outcome.status, outcome, finishedAt: now, leaseOwner: null, leaseUntil: null, waiting: null });
    // One that ever suspended is kept as long as its TTL from its end, like any other.
    if (row.retainMs !== null) row.invocation.expireAt = now + row.retainMs;
    // A pending callback's first attempt falls due when its invocation finishes.
    if (row.invocation.callback?.state === 'pending') this.dueAt(row, now);
  }

  /** Gives up on or cancels an unfinished invocation, whatever its lease. */
  private end(ref: InvocationRef, outcome: Exclude<Outcome, { status: 'Completed' }>, now: number): boolean {
    const row = this.live(ref, now);
    if (!row || isTerminal(row.invocation.status)) return false;
    this.finish(row, copy(outcome), now);
    return true;
  }

  async giveUp(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean> {
    return this.end(ref, { status: 'Failed', error }, now);
  }

  async quarantine(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean> {
    return this.end(ref, { status: 'Failed', error }, now);
  }

  async cancel(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean> {
    return this.end(ref, { status: 'Cancelled', error }, now);
  }

  async suspend(ref: InvocationRef, lease: { owner: string; attempt: number }, suspension: Suspension, now: number): Promise<'waiting' | 'requeued' | null> {
    const row = this.leasedAttempt(ref, lease);
    if (!row) return null;
    const { reason } = suspension;
    // An event sent while it ran completed the wait it suspends on, and could not wake it: it runs again.
    const requeue = reason.kind === 'event' && ![...row.journal.values()].some((e) => e.kind === 'event' && e.name === reason.name && e.status === 'waiting');
    const inv = row.invocation;
    row.retainMs ??= inv.expireAt - inv.createdAt;
    Object.assign(inv, {
      status: requeue ? 'Queued' : 'Waiting',
      waiting: requeue ? null : copy(reason),
      leaseOwner: null,
      leaseUntil: null,
      activeMs: inv.activeMs + suspension.activeMs,
      progressAttempt: inv.attempt,
      expireAt: Math.max(inv.expireAt, suspension.keepUntil),
    });
    if (requeue) row.publishedAt = now;
    return requeue ? 'requeued' : 'waiting';
  }

  async wakeDue(now: number, limit: number): Promise<Array<InvocationRef & { pool: string }>> {
    const due = [...this.rows.values()]
      .filter(({ invocation: inv }) => inv.status === 'Waiting' && inv.waiting !== null && inv.waiting.until <= now && inv.expireAt > now)
      .sort((a, b) => (a.invocation.waiting?.until ?? 0) - (b.invocation.waiting?.until ?? 0))
      .slice(0, limit);
    return due.map((row) => {
      Object.assign(row.invocation, { status: 'Queued', waiting: null });
      row.publishedAt = now;
      return { botId: row.invocation.botId, id: row.invocation.id, pool: row.invocation.pool };
    });
  }

  async countWaiting(now: number): Promise<number> {
    return [...this.rows.values()].filter(({ invocation: inv }) => inv.status === 'Waiting' && inv.expireAt > now).length;
  }

  async releaseLease(ref: InvocationRef, owner: string): Promise<boolean> {
    const row = this.leased(ref, owner);
    if (row) Object.assign(row.invocation, { status: 'Queued', leaseOwner: null, leaseUntil: null });
    return row !== undefined;
  }

  async releaseLeasesOf(owner: string): Promise<InvocationRef[]> {
    const released: InvocationRef[] = [];
    for (const row of this.rows.values()) {
      const inv = row.invocation;
      if (inv.status !== 'Running' || inv.leaseOwner !== owner) continue;
      Object.assign(inv, { status: 'Queued', leaseOwner: null, leaseUntil: null });
      row.publishedAt = 0;
      released.push({ botId: inv.botId, id: inv.id });
    }
    return released;
  }

  async requeueExpiredLeases(before: number): Promise<InvocationRef[]> {
    const requeued: InvocationRef[] = [];
    for (const row of this.rows.values()) {
      const inv = row.invocation;
      if (inv.status !== 'Running' || inv.leaseUntil === null || inv.leaseUntil >= before) continue;
      Object.assign(inv, { status: 'Queued', leaseOwner: null, leaseUntil: null });
      // A requeued invocation counts as never published, so the next sweep publishes it.
      row.publishedAt = 0;
      requeued.push({ botId: inv.botId, id: inv.id });
    }
    return requeued;
  }

  async takeUnpublished(before: number, now: number, limit: number): Promise<Array<InvocationRef & { pool: string }>> {
    const due = [...this.rows.values()]
      .filter((row) => row.invocation.status === 'Queued' && row.publishedAt < before && row.invocation.expireAt > now)
      .sort((a, b) => a.invocation.createdAt - b.invocation.createdAt)
      .slice(0, limit);
    return due.map((row) => {
      row.publishedAt = now;
      return { botId: row.invocation.botId, id: row.invocation.id, pool: row.invocation.pool };
    });
  }

  async list(botId: string, filter: InvocationListFilter): Promise<InvocationSummary[]> {
    const now = this.clock.now();
    return [...this.rows.values()]
      .map((row) => row.invocation)
      .filter((inv) => inv.botId === botId && inv.expireAt > now)
      .filter((inv) => (!filter.status || inv.status === filter.status) && (!filter.integrationId || inv.integrationId === filter.integrationId))
      .filter((inv) => !filter.after || inv.createdAt < filter.after.createdAt || (inv.createdAt === filter.after.createdAt && inv.id > filter.after.id))
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, filter.limit)
      .map((inv) => copy(invocationSummary(inv)));
  }

  async takeDueCallbacks(now: number, leaseMs: number, limit: number, share?: CallbackShare): Promise<InvocationRef[]> {
    const byDue = [...this.rows.values()]
      .filter((row) => row.invocation.callback?.state === 'pending' && row.callbackDueAt <= now && isTerminal(row.invocation.status) && row.invocation.expireAt > now)
      .sort((a, b) => a.callbackDueAt - b.callbackDueAt);
    const nth = new Map<string, number>();
    const ranked = byDue.map((row) => {
      const n = (nth.get(row.invocation.botId) ?? 0) + 1;
      nth.set(row.invocation.botId, n);
      return { row, n };
    });
    const due = share
      ? ranked
          .filter(({ row, n }) => n + (share.inFlight.get(row.invocation.botId) ?? 0) <= share.perBot)
          .sort((a, b) => a.n - b.n || a.row.callbackDueAt - b.row.callbackDueAt)
          .map(({ row }) => row)
          .slice(0, limit)
      : byDue.slice(0, limit);
    return due.map((row) => {
      this.dueAt(row, now + leaseMs);
      return { botId: row.invocation.botId, id: row.invocation.id };
    });
  }

  private dueAt(row: Row, at: number | null): void {
    row.callbackDueAt = at ?? 0;
    if (row.invocation.callback) row.invocation.callback.nextAttemptAt = row.invocation.callback.state === 'pending' && at ? at : null;
  }

  async recordCallbackAttempt(ref: InvocationRef, attempt: { at: number; error: string | null; nextAttemptAt: number | null }): Promise<void> {
    const row = this.rows.get(keyOf(ref));
    const callback = row?.invocation.callback;
    if (!row || !callback || callback.state !== 'pending') return;
    callback.attempts += 1;
    callback.lastError = attempt.error;
    callback.state = attempt.error === null ? 'delivered' : attempt.nextAttemptAt === null ? 'failed' : 'pending';
    callback.deliveredAt = attempt.error === null ? attempt.at : null;
    this.dueAt(row, attempt.nextAttemptAt);
  }

  async countActive(botId: string, now: number): Promise<ActiveCount> {
    const count: ActiveCount = { total: 0, byToken: {} };
    for (const { invocation: inv } of this.rows.values()) {
      if (inv.botId !== botId || !ACTIVE_STATUSES.includes(inv.status) || inv.expireAt <= now) continue;
      count.total++;
      if (inv.tokenId !== null) count.byToken[inv.tokenId] = (count.byToken[inv.tokenId] ?? 0) + 1;
    }
    return count;
  }

  async timings(botId: string, since: number, limit: number): Promise<InvocationTiming[]> {
    const now = this.clock.now();
    return [...this.rows.values()]
      .map((row) => row.invocation)
      .filter((inv) => inv.botId === botId && inv.createdAt >= since && inv.expireAt > now)
      .sort((a, b) => b.createdAt - a.createdAt)
      .slice(0, limit)
      .map(invocationTiming);
  }

  async recentDurations(botId: string, integrationId: string, limit: number): Promise<number[]> {
    return [...this.rows.values()]
      .map((row) => row.invocation)
      .filter((inv) => inv.botId === botId && inv.integrationId === integrationId && inv.finishedAt !== null && inv.startedAt !== null)
      .sort((a, b) => (b.finishedAt as number) - (a.finishedAt as number))
      .slice(0, limit)
      .map((inv) => (inv.finishedAt as number) - (inv.startedAt as number));
  }

  async deleteBot(botId: string): Promise<number> {
    for (const [key, record] of this.keys) if (record.botId === botId) this.keys.delete(key);
    let deleted = 0;
    for (const [key, row] of this.rows) {
      if (row.invocation.botId !== botId) continue;
      this.rows.delete(key);
      deleted++;
    }
    return deleted;
  }

  async deleteExpired(now: number): Promise<number> {
    for (const [key, record] of this.keys) if (record.expireAt <= now) this.keys.delete(key);
    let deleted = 0;
    for (const [key, row] of this.rows) {
      const { expireAt, leaseOwner, leaseUntil } = row.invocation;
      // A run holding its lease goes on and records its outcome; the invocation goes after it.
      if (expireAt > now || (leaseOwner !== null && leaseUntil !== null && leaseUntil >= now)) continue;
      this.rows.delete(key);
      deleted++;
    }
    return deleted;
  }
}

/** The journals of durable runs in memory, kept in the invocations' rows: they go with them. */
export class FakeJournalStore implements JournalStore {
  constructor(private readonly invocations: FakeInvocationStore) {}

  private entriesOf(ref: InvocationRef): JournalEntry[] {
    return [...(this.invocations.rowOf(ref)?.journal.values() ?? [])];
  }

  async read(ref: InvocationRef): Promise<JournalEntry[]> {
    return copy(this.entriesOf(ref));
  }

  async list(ref: InvocationRef, options: { limit: number; before?: Pick<JournalEntry, 'name' | 'occurrence'> }): Promise<StepSummary[]> {
    const entries = this.entriesOf(ref);
    const { before } = options;
    const end = before ? entries.findIndex((e) => e.name === before.name && e.occurrence === before.occurrence) : entries.length;
    return entries
      .slice(0, Math.max(end, 0))
      .reverse()
      .slice(0, options.limit)
      .map(({ resultJson, ...entry }) => copy({ ...entry, resultBytes: resultJson === null ? 0 : Buffer.byteLength(resultJson) }));
  }

  private usageOf(row: Row): JournalUsage {
    return { steps: row.journal.size, journalBytes: row.journalBytes, keptEvents: row.events.length };
  }

  /** Writes `entry` (new, or replacing the stored one) within the limits, as progress of the attempt. */
  private write(row: Row, entry: JournalEntry, growth: { steps: number; journalBytes: number }, limits: JournalLimits): JournalEntry {
    const refused = journalLimitPassed(this.usageOf(row), growth, limits);
    if (refused) throw refused;
    row.journal.set(stepKey(entry), copy(entry));
    row.journalBytes += growth.journalBytes;
    row.invocation.steps = row.journal.size;
    row.invocation.progressAttempt = row.invocation.attempt;
    return entry;
  }

  async record(ref: InvocationRef, lease: JournalLease, step: StepRecord, limits: JournalLimits): Promise<JournalEntry | null> {
    if (step.status === 'done') resultBytesWithin(step.resultJson, limits, 'result');
    const row = this.invocations.leasedAttempt(ref, lease);
    if (!row) return null;
    const existing = row.journal.get(stepKey(step));
    if (existing && isSettledForRecord(existing)) return copy(existing);
    const entry = stepEntry(copy(step), existing?.startedAt);
    return this.write(row, entry, { steps: existing ? 0 : 1, journalBytes: journalBytesOf(entry) - (existing ? journalBytesOf(existing) : 0) }, limits);
  }

  async beginWait(ref: InvocationRef, lease: JournalLease, wait: WaitRecord, limits: JournalLimits): Promise<JournalEntry | null> {
    const row = this.invocations.leasedAttempt(ref, lease);
    if (!row) return null;
    const existing = row.journal.get(stepKey(wait));
    if (existing) return copy(existing);
    const kept = wait.kind === 'event' ? row.events.findIndex((e) => e.name === wait.name) : -1;
    // A kept event moves into the entry: the journal's size stays.
    const entry = this.write(row, waitEntry(wait, kept >= 0 ? row.events[kept].payloadJson : null), { steps: 1, journalBytes: 0 }, limits);
    if (kept >= 0) row.events.splice(kept, 1);
    return entry;
  }

  async timeOut(ref: InvocationRef, lease: JournalLease, step: Pick<JournalEntry, 'name' | 'occurrence'>, now: number): Promise<JournalEntry | null> {
    const row = this.invocations.leasedAttempt(ref, lease);
    if (!row) return null;
    const entry = row.journal.get(stepKey(step));
    if (!entry) throw new Error(`The journal has no wait '${step.name}' (occurrence ${step.occurrence}) to time out.`);
    if (entry.kind === 'event' && entry.status === 'waiting' && entry.until !== null && entry.until <= now) {
      Object.assign(entry, { status: 'done', resultJson: TIMED_OUT_RESULT_JSON, finishedAt: now, until: null });
      row.journalBytes += Buffer.byteLength(TIMED_OUT_RESULT_JSON);
    }
    return copy(entry);
  }

  async sendEvent(ref: InvocationRef, event: { name: string; payloadJson: string; at: number }, limits: JournalLimits): Promise<EventDelivery | null> {
    const bytes = resultBytesWithin(event.payloadJson, limits, 'payload');
    const row = this.invocations.rowOf(ref);
    if (!row || row.invocation.expireAt <= event.at || !UNFINISHED_STATUSES.includes(row.invocation.status)) return null;
    const wait = [...row.journal.values()]
      .filter((e) => e.kind === 'event' && e.name === event.name && e.status === 'waiting' && e.until !== null && e.until > event.at)
      .sort((a, b) => a.occurrence - b.occurrence)[0];
    const refused = journalLimitPassed(this.usageOf(row), { journalBytes: bytes, keptEvents: wait ? 0 : 1 }, limits);
    if (refused) throw refused;
    row.journalBytes += bytes;
    if (!wait) {
      row.events.push({ name: event.name, payloadJson: event.payloadJson });
      return { delivered: 'kept' };
    }
    Object.assign(wait, { status: 'done', resultJson: event.payloadJson, finishedAt: event.at, until: null });
    if (row.invocation.status !== 'Waiting') return { delivered: 'taken' };
    Object.assign(row.invocation, { status: 'Queued', waiting: null });
    row.publishedAt = event.at;
    return { delivered: 'resumed', pool: row.invocation.pool };
  }
}

/** A catalog in memory (entities, integration versions, quotas, signing secrets). */
export class FakeCatalogStore implements CatalogStore {
  private readonly entities = new Map<string, EntityDefinition>();
  private integrations: IntegrationDefinition[] = [];
  /** The last version of each deleted integration, by bot and id: numbers are never reused. */
  private readonly deletedVersions = new Map<string, number>();
  private readonly drafts = new Map<string, IntegrationDraft>();
  private readonly quotas = new Map<string, BotQuotas>();
  private readonly secrets = new Map<string, SigningSecret[]>();
  /** Bots that hold a token (listBots names them too). */
  constructor(private readonly tokenBots: () => Iterable<string>) {}

  async putEntity(botId: string, name: string, extraFields: string[], now: number): Promise<EntityDefinition> {
    const fields = [...WEBHOOK_FIELDS, ...extraFields.filter((f) => !(WEBHOOK_FIELDS as readonly string[]).includes(f))];
    const entity = { botId, name, fields, updatedAt: now };
    this.entities.set(`${botId}\u0000${name}`, copy(entity));
    return entity;
  }

  async getEntity(botId: string, name: string): Promise<EntityDefinition | null> {
    return copy(this.entities.get(`${botId}\u0000${name}`) ?? null);
  }

  async listEntities(botId: string): Promise<EntityDefinition[]> {
    return copy([...this.entities.values()].filter((e) => e.botId === botId).sort((a, b) => (a.name < b.name ? -1 : 1)));
  }

  async deleteEntity(botId: string, name: string): Promise<boolean> {
    return this.entities.delete(`${botId}\u0000${name}`);
  }

  private versionsOf(botId: string, integrationId: string): IntegrationDefinition[] {
    return this.integrations.filter((i) => i.botId === botId && i.integrationId === integrationId).sort((a, b) => b.version - a.version);
  }

  async deployIntegration(botId: string, integrationId: string, settings: IntegrationSettings, now: number): Promise<IntegrationDefinition> {
    const latest = Math.max(this.versionsOf(botId, integrationId)[0]?.version ?? 0, this.deletedVersions.get(`${botId}\u0000${integrationId}`) ?? 0);
    const definition: IntegrationDefinition = { botId, integrationId, version: latest + 1, deployedAt: now, ...copy(withoutEmptySources(integrationSettingsOf(settings))) };
    this.integrations.push(copy(definition));
    return definition;
  }

  async putDraft(botId: string, integrationId: string, settings: IntegrationSettings, now: number): Promise<IntegrationDraft> {
    const draft: IntegrationDraft = { botId, integrationId, draftedAt: now, ...integrationSettingsOf(copy(settings)) };
    this.drafts.set(`${botId}\u0000${integrationId}`, copy(draft));
    return draft;
  }

  async getDraft(botId: string, integrationId: string): Promise<IntegrationDraft | null> {
    return copy(this.drafts.get(`${botId}\u0000${integrationId}`) ?? null);
  }

  async publishDraft(botId: string, integrationId: string, draftedAt: number, now: number): Promise<IntegrationDefinition | null> {
    const draft = await this.getDraft(botId, integrationId);
    if (!draft || draft.draftedAt !== draftedAt) return null;
    this.drafts.delete(`${botId}\u0000${integrationId}`);
    return this.deployIntegration(botId, integrationId, integrationSettingsOf(draft), now);
  }

  async getIntegration(botId: string, integrationId: string, version?: number): Promise<IntegrationDefinition | null> {
    const versions = this.versionsOf(botId, integrationId);
    const found = version === undefined ? versions[0] : versions.find((i) => i.version === version);
    return found ? { ...copy(found), limits: withDefaultLimits(found.limits) } : null;
  }

  async resolveIntegration(botId: string, integrationId: string): Promise<IntegrationTarget | null> {
    const latest = this.versionsOf(botId, integrationId)[0];
    return latest
      ? { integrationId, version: latest.version, entityName: latest.entityName, pool: latest.pool, callbackUrl: latest.callbackUrl, ...(latest.inboundAuth && { inboundAuth: copy(latest.inboundAuth) }) }
      : null;
  }

  async listIntegrations(botId: string): Promise<IntegrationDefinition[]> {
    const ids = [...new Set(this.integrations.filter((i) => i.botId === botId).map((i) => i.integrationId))].sort();
    return Promise.all(ids.map(async (id) => (await this.getIntegration(botId, id)) as IntegrationDefinition));
  }

  async listIntegrationVersions(botId: string, integrationId: string): Promise<Array<{ version: number; deployedAt: number }>> {
    return this.versionsOf(botId, integrationId).map((i) => ({ version: i.version, deployedAt: i.deployedAt }));
  }

  async deleteIntegration(botId: string, integrationId: string): Promise<number> {
    const versions = this.versionsOf(botId, integrationId);
    if (versions.length > 0) this.deletedVersions.set(`${botId}\u0000${integrationId}`, versions[0].version);
    this.drafts.delete(`${botId}\u0000${integrationId}`);
    this.integrations = this.integrations.filter((i) => i.botId !== botId || i.integrationId !== integrationId);
    return versions.length;
  }

  async deleteBot(botId: string): Promise<void> {
    for (const entity of await this.listEntities(botId)) this.entities.delete(`${botId}\u0000${entity.name}`);
    for (const integration of await this.listIntegrations(botId)) await this.deleteIntegration(botId, integration.integrationId);
    for (const [key, draft] of this.drafts) if (draft.botId === botId) this.drafts.delete(key);
    this.quotas.delete(botId);
    this.secrets.delete(botId);
  }

  async listBots(): Promise<string[]> {
    const bots = new Set([...[...this.entities.values()].map((e) => e.botId), ...this.integrations.map((i) => i.botId), ...this.tokenBots()]);
    return [...bots].sort();
  }

  async getQuotas(botId: string): Promise<BotQuotas> {
    return copy(this.quotas.get(botId) ?? { bot: { ratePerSecond: null, burst: null, maxInFlight: null }, tokens: {} });
  }

  async putQuotas(botId: string, tokenId: string | null, quotas: Quotas, _now: number): Promise<void> {
    const current = await this.getQuotas(botId);
    const none = quotas.ratePerSecond === null && quotas.burst === null && quotas.maxInFlight === null;
    if (tokenId === null) current.bot = none ? { ratePerSecond: null, burst: null, maxInFlight: null } : copy(quotas);
    else if (none) delete current.tokens[tokenId];
    else current.tokens[tokenId] = copy(quotas);
    this.quotas.set(botId, current);
  }

  async rotateSigningSecret(botId: string, secret: SigningSecret, retireAt: number): Promise<void> {
    const secrets = this.secrets.get(botId) ?? [];
    for (const s of secrets) if (s.expiresAt === null || s.expiresAt > retireAt) s.expiresAt = retireAt;
    secrets.push(copy(secret));
    this.secrets.set(botId, secrets);
  }

  async listSigningSecrets(now: number): Promise<Array<SigningSecret & { botId: string }>> {
    const bots = [...this.secrets.keys()].sort();
    const all = await Promise.all(bots.map(async (botId) => (await this.getSigningSecrets(botId, now)).map((s) => ({ botId, ...s }))));
    return all.flat();
  }

  async resealSigningSecret(botId: string, expected: string, sealed: string): Promise<boolean> {
    const secret = (this.secrets.get(botId) ?? []).find((s) => s.secret === expected);
    if (!secret) return false;
    secret.secret = sealed;
    return true;
  }

  async getSigningSecrets(botId: string, now: number): Promise<SigningSecret[]> {
    const secrets = (this.secrets.get(botId) ?? []).map((s, order) => ({ s, order }));
    return secrets
      .filter(({ s }) => s.expiresAt === null || s.expiresAt > now)
      .sort((a, b) => b.s.createdAt - a.s.createdAt || b.order - a.order)
      .map(({ s }) => copy(s));
  }
}

/** The token registry in memory. */
export class FakeTokenStore implements TokenStore {
  readonly records = new Map<string, TokenRecord>();

  async create(record: TokenRecord): Promise<void> {
    const key = `${record.botId}\u0000${record.tokenId}`;
    if (this.records.has(key)) throw new Error(`A token '${record.tokenId}' exists already.`);
    this.records.set(key, copy(record));
  }

  async get(botId: string, tokenId: string): Promise<TokenRecord | null> {
    return copy(this.records.get(`${botId}\u0000${tokenId}`) ?? null);
  }

  async list(botId: string): Promise<TokenRecord[]> {
    return copy([...this.records.values()].filter((t) => t.botId === botId).sort((a, b) => b.createdAt - a.createdAt || (a.tokenId < b.tokenId ? -1 : 1)));
  }

  async revoke(botId: string, tokenId: string, now: number): Promise<boolean> {
    const record = this.records.get(`${botId}\u0000${tokenId}`);
    if (!record) return false;
    record.revokedAt ??= now;
    return true;
  }

  async deleteAll(botId: string): Promise<number> {
    const keys = [...this.records.values()].filter((t) => t.botId === botId).map((t) => `${botId}\u0000${t.tokenId}`);
    for (const key of keys) this.records.delete(key);
    return keys.length;
  }
}

/** Secrets in memory, ordered as the real stores page them: bot, integration ('' for the bot's own), name. */
export class FakeSecretStore implements SecretStore {
  readonly records = new Map<string, StoredSecret>();

  private static key({ botId, integrationId, name }: SecretRef): string {
    return `${botId}\u0000${integrationId ?? ''}\u0000${name}`;
  }

  private sorted(): Array<[string, StoredSecret]> {
    return [...this.records.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  async put(ref: SecretRef, sealed: string, now: number, maxPerScope: number): Promise<SecretPut> {
    const key = FakeSecretStore.key(ref);
    const existing = this.records.get(key);
    if (existing) {
      this.records.set(key, { ...existing, sealed, updatedAt: now });
      return 'updated';
    }
    if ((await this.list(ref)).length >= maxPerScope) return 'full';
    const { botId, integrationId, name } = ref;
    this.records.set(key, { botId, integrationId, name, sealed, createdAt: now, updatedAt: now });
    return 'created';
  }

  async list({ botId, integrationId }: SecretScope): Promise<StoredSecret[]> {
    return copy(this.sorted().map(([, s]) => s).filter((s) => s.botId === botId && s.integrationId === integrationId));
  }

  async listForRun(botId: string, integrationId: string): Promise<StoredSecret[]> {
    return copy(this.sorted().map(([, s]) => s).filter((s) => s.botId === botId && (s.integrationId === null || s.integrationId === integrationId)));
  }

  async delete(ref: SecretRef): Promise<boolean> {
    return this.records.delete(FakeSecretStore.key(ref));
  }

  async deleteAll(botId: string, integrationId?: string): Promise<number> {
    const doomed = [...this.records.values()].filter((s) => s.botId === botId && (integrationId === undefined || s.integrationId === integrationId));
    for (const secret of doomed) this.records.delete(FakeSecretStore.key(secret));
    return doomed.length;
  }

  async page(after: SecretRef | null, limit: number): Promise<StoredSecret[]> {
    const from = after ? FakeSecretStore.key(after) : null;
    return copy(this.sorted().filter(([key]) => from === null || key > from).slice(0, limit).map(([, s]) => s));
  }

  async reseal(ref: SecretRef, expected: string, sealed: string): Promise<boolean> {
    const record = this.records.get(FakeSecretStore.key(ref));
    if (!record || record.sealed !== expected) return false;
    record.sealed = sealed;
    return true;
  }
}

/** How many multiples of the heartbeat's ttl an instance unseen is kept (as the SQLite registry does). */
const FORGET_AFTER_TTLS = 10;

/** Live service instances in memory. */
export class FakeInstanceRegistry implements InstanceRegistry {
  private readonly seen = new Map<string, number>();

  async heartbeat(role: string, instanceId: string, now: number, ttlMs: number): Promise<number> {
    this.seen.set(`${role}\u0000${instanceId}`, now);
    let count = 0;
    for (const [key, at] of this.seen) {
      if (!key.startsWith(`${role}\u0000`)) continue;
      if (at < now - FORGET_AFTER_TTLS * ttlMs) this.seen.delete(key);
      else if (at >= now - ttlMs) count++;
    }
    return count;
  }

  async leave(role: string, instanceId: string): Promise<void> {
    this.seen.delete(`${role}\u0000${instanceId}`);
  }
}

/** A whole store in memory, for the small tier: no file, no server, nothing to clean up but itself. */
export function createFakeStore(clock: Clock): Store & { invocations: FakeInvocationStore; secrets: FakeSecretStore } {
  const tokens = new FakeTokenStore();
  const invocations = new FakeInvocationStore(clock);
  let closed = false;
  return {
    invocations,
    journal: new FakeJournalStore(invocations),
    catalog: new FakeCatalogStore(() => [...tokens.records.values()].map((t) => t.botId)),
    tokens,
    secrets: new FakeSecretStore(),
    instances: new FakeInstanceRegistry(),
    async ping() {
      return !closed;
    },
    async close() {
      closed = true;
    },
  };
}
