import { Cancellation, SlotMap } from '@gi/domain';
import type { InvocationRef } from '@gi/domain';

const keyOf = (ref: InvocationRef) => `${ref.botId}/${ref.id}`;

/** The runs this executor has going, so a cancellation heard on the bus can stop the right one. */
export class RunningInvocations {
  private readonly runs = new SlotMap<string, Cancellation>();

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

  get size(): number {
    return this.runs.size;
  }
}
