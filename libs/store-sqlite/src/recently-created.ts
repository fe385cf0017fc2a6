import type { InvocationRef, NewInvocation } from '@gi/domain';

export interface RecentlyCreatedLimits {
  /** Invocations held at most. */
  count: number;
  /** The JSON size of the entities held (with their raw bodies), at most; one larger than a sixteenth of it is never held. */
  entityBytes: number;
}

/** An invocation as created, and its entity's JSON as stored. */
export interface Created {
  invocation: NewInvocation;
  entityJson: string;
}

export const DEFAULT_RECENTLY_CREATED: RecentlyCreatedLimits = { count: 1024, entityBytes: 8 << 20 };

/**
 * The invocations this store created lately, as they were given (their entity already parsed), with
 * the entity's JSON as stored. In an embedded deployment the executor claims an invocation just after
 * the gateway created it through the same store: the claim then needs only the attempt back from SQLite,
 * not the row to parse again, and the run not the entity to serialize again. What it holds never changes
 * after creation. A claim takes its entry out; the oldest go first past the limits.
 */
export class RecentlyCreated {
  private readonly entries = new Map<string, Created & { entityBytes: number }>();
  private entityBytes = 0;

  constructor(private readonly limits: RecentlyCreatedLimits = DEFAULT_RECENTLY_CREATED) {}

  remember(invocation: NewInvocation, entityJson: string, entityBytes: number): void {
    if (entityBytes > this.limits.entityBytes / 16) return;
    const previous = this.entries.get(invocation.id);
    if (previous) this.forget(invocation.id, previous.entityBytes);
    this.entries.set(invocation.id, { invocation, entityJson, entityBytes });
    this.entityBytes += entityBytes;
    for (const [id, oldest] of this.entries) {
      if (this.entries.size <= this.limits.count && this.entityBytes <= this.limits.entityBytes) break;
      this.forget(id, oldest.entityBytes);
    }
  }

  /** The invocation as created, once: its entry is gone afterwards. Undefined unless this store created it lately. */
  take(ref: InvocationRef): Created | undefined {
    const entry = this.entries.get(ref.id);
    if (!entry || entry.invocation.botId !== ref.botId) return undefined;
    this.forget(ref.id, entry.entityBytes);
    return { invocation: entry.invocation, entityJson: entry.entityJson };
  }

  private forget(id: string, entityBytes: number): void {
    this.entries.delete(id);
    this.entityBytes -= entityBytes;
  }
}
