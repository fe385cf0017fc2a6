import { rawBodySpan, SlotMap, type InvocationRef, type NewInvocation } from '@gi/domain';

export interface RecentlyCreatedLimits {
  /** Invocations held at most. */
  count: number;
  /** The JSON size of the entities held (with raw bodies that do not lie in them), at most; one larger than a sixteenth of it is never held. */
  entityBytes: number;
}

export const DEFAULT_RECENTLY_CREATED: RecentlyCreatedLimits = { count: 1024, entityBytes: 8 << 20 };

/**
 * The invocations this store created lately, as they were given. In an embedded deployment the executor
 * claims an invocation just after the gateway created it through the same store: the claim then needs
 * only the attempt back from SQLite, not the row and its payload read again. What it holds never changes
 * after creation. A claim takes its entry out; the oldest go first past the limits.
 */
export class RecentlyCreated {
  private readonly entries = new SlotMap<string, { invocation: NewInvocation; entityBytes: number }>();
  private entityBytes = 0;

  constructor(private readonly limits: RecentlyCreatedLimits = DEFAULT_RECENTLY_CREATED) {}

  remember(invocation: NewInvocation): void {
    // What it costs held in memory: its entity's JSON and its raw body, unless that lies in the entity
    // (a slice of it: rawBodyWithin).
    const rawBytes = rawBodySpan(invocation.entityJson, invocation.rawBody) ? 0 : (invocation.rawBody?.length ?? 0);
    const entityBytes = invocation.entityJson.length + rawBytes;
    if (entityBytes > this.limits.entityBytes / 16) return;
    const previous = this.entries.get(invocation.id);
    if (previous) this.forget(invocation.id, previous.entityBytes);
    this.entries.set(invocation.id, { invocation, entityBytes });
    this.entityBytes += entityBytes;
    for (const [id, oldest] of this.entries) {
      if (this.entries.size <= this.limits.count && this.entityBytes <= this.limits.entityBytes) break;
      this.forget(id, oldest.entityBytes);
    }
  }

  /** The invocation as created, once: its entry is gone afterwards. Undefined unless this store created it lately. */
  take(ref: InvocationRef): NewInvocation | undefined {
    const entry = this.entries.get(ref.id);
    if (!entry || entry.invocation.botId !== ref.botId) return undefined;
    this.forget(ref.id, entry.entityBytes);
    return entry.invocation;
  }

  private forget(id: string, entityBytes: number): void {
    this.entries.delete(id);
    this.entityBytes -= entityBytes;
  }
}
