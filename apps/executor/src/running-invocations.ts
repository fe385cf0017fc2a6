import { Cancellation, SlotMap } from '@gi/domain';
import type { InvocationRef } from '@gi/domain';

const keyOf = (ref: InvocationRef) => `${ref.botId}/${ref.id}`;

/**
 * The runs this executor has going, so a cancellation heard on the bus can stop the right one, and a
 * stopping executor can hand back those its drain deadline caught.
 */
export class RunningInvocations {
  private readonly runs = new SlotMap<string, Cancellation>();
  private readonly handedBack = new WeakSet<Cancellation>();

  /** Registers a run; its cancellation is requested when the invocation is cancelled. Call `done` when it ends. */
  start(ref: InvocationRef): Cancellation {
    const cancellation = new Cancellation();
    this.runs.set(keyOf(ref), cancellation);
    return cancellation;
  }

  /** Forgets the run of `ref` that `start` returned `cancellation` for (a later run of it stays). */
  done(ref: InvocationRef, cancellation: Cancellation): void {
    const key = keyOf(ref);
    if (this.runs.get(key) === cancellation) this.runs.delete(key);
  }

  /** Stops the run of `ref` if this executor has it; false otherwise (another executor has it, or none). */
  cancel(ref: InvocationRef): boolean {
    const cancellation = this.runs.get(keyOf(ref));
    cancellation?.request();
    return cancellation !== undefined;
  }

  /**
   * Stops every run this executor has, to be handed back rather than recorded (`isHandedBack`): the
   * executor is stopping and its drain deadline passed. Returns how many.
   */
  handBackAll(): number {
    for (const [, cancellation] of this.runs) {
      this.handedBack.add(cancellation);
      cancellation.request();
    }
    return this.runs.size;
  }

  /** The run was stopped by `handBackAll`: its invocation goes back to Queued and its job to the queue. */
  isHandedBack(cancellation: Cancellation): boolean {
    return this.handedBack.has(cancellation);
  }

  get size(): number {
    return this.runs.size;
  }
}
