/**
 * Completion events are routed by partition: the routing key is one of COMPLETION_PARTITIONS keys,
 * derived from the invocation id, and a process binds a key only while something in it waits for an
 * invocation of that partition. The count is part of the wire contract: every process must agree on it.
 */
export const COMPLETION_PARTITIONS = 64;

/** The routing key of an invocation's completion events (FNV-1a of its id, modulo the partitions). */
export function completionPartition(invocationId: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < invocationId.length; i++) {
    hash ^= invocationId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `p${hash % COMPLETION_PARTITIONS}`;
}

/** What the interest binds and unbinds; the bus's completion subscribers. */
export interface PartitionBinder {
  bind(key: string): Promise<void>;
  unbind(key: string): Promise<void>;
}

/** One registered wait, as the bus hands it out. */
export interface PartitionWatch {
  release(): void;
}

interface WatchEntry {
  invocationId: string;
  key: string;
  /** Counted in `active` (its partition is bound); else a standby watch, waiting for a direct reply. */
  active: boolean;
  released: boolean;
  /** A standby watch's: called once it is active. */
  onPromoted?: () => void;
}

/** A standby watch: a sync call expecting a direct reply, told when it is routed by partition instead. */
export interface Standby {
  onPromoted?: () => void;
}

/**
 * Which completion partitions this process needs bound, counted per partition. A partition is bound
 * when its first active watch comes and unbound only after it has had none for `lingerMs`, so a steady
 * trickle of waits in one partition does not bind and unbind on every call (bindings are broker
 * metadata writes). A standby watch (a sync call expecting a direct reply) binds nothing until its
 * reply can no longer come: `promoteStandby` (the connection was lost) or `promoteStandbyOf` then make
 * it active, bound first and told after (the protocol's table: libs/use-cases completion-routing).
 */
export class PartitionInterest {
  private readonly active = new Map<string, number>();
  private readonly standby = new Set<WatchEntry>();
  private readonly lingering = new Map<string, NodeJS.Timeout>();
  /** Partitions bound (or being bound: a later watch of the partition waits for the same binding). */
  private readonly bound = new Map<string, Promise<void>>();

  constructor(
    private readonly binder: PartitionBinder,
    private readonly lingerMs: number,
  ) {}

  /** Resolves once the partition of `invocationId` is bound (at once for a standby watch or a bound partition). */
  async watch(invocationId: string, standby: Standby | null): Promise<PartitionWatch> {
    const entry: WatchEntry = { invocationId, key: completionPartition(invocationId), active: false, released: false, onPromoted: standby?.onPromoted };
    if (standby) this.standby.add(entry);
    else await this.activate(entry);
    return { release: () => this.release(entry) };
  }

  /** The partitions to bind on a new listening queue. */
  keys(): string[] {
    return [...this.bound.keys()];
  }

  /** The connection changed: direct replies expected on the old one will not come, so route those waits by partition. */
  async promoteStandby(): Promise<void> {
    const entries = [...this.standby];
    this.standby.clear();
    await Promise.all(entries.map((entry) => this.promote(entry)));
  }

  /** The job of a sync call was not published with its reply address (it is left for the sweeper): route its waits by partition. */
  async promoteStandbyOf(invocationId: string): Promise<void> {
    const entries = [...this.standby].filter((entry) => entry.invocationId === invocationId);
    for (const entry of entries) this.standby.delete(entry);
    await Promise.all(entries.map((entry) => this.promote(entry)));
  }

  /** Forgets every timer (the bus is closing). */
  clear(): void {
    for (const timer of this.lingering.values()) clearTimeout(timer);
    this.lingering.clear();
  }

  /** A standby watch made active: bound first, so the event its waiter now asks for cannot slip past. */
  private async promote(entry: WatchEntry): Promise<void> {
    await this.activate(entry);
    if (!entry.released) entry.onPromoted?.();
  }

  private async activate(entry: WatchEntry): Promise<void> {
    entry.active = true;
    this.active.set(entry.key, (this.active.get(entry.key) ?? 0) + 1);
    const timer = this.lingering.get(entry.key);
    if (timer) {
      clearTimeout(timer);
      this.lingering.delete(entry.key);
    }
    let binding = this.bound.get(entry.key);
    if (!binding) {
      binding = this.binder.bind(entry.key);
      this.bound.set(entry.key, binding);
    }
    await binding;
  }

  private release(entry: WatchEntry): void {
    if (entry.released) return;
    entry.released = true;
    if (!entry.active) {
      this.standby.delete(entry);
      return;
    }
    const left = (this.active.get(entry.key) ?? 1) - 1;
    if (left > 0) {
      this.active.set(entry.key, left);
      return;
    }
    this.active.delete(entry.key);
    const timer = setTimeout(() => {
      this.lingering.delete(entry.key);
      if (this.active.has(entry.key)) return;
      this.bound.delete(entry.key);
      void this.binder.unbind(entry.key);
    }, this.lingerMs);
    timer.unref();
    this.lingering.set(entry.key, timer);
  }
}
