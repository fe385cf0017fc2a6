import type { InvocationRef } from '@gi/domain';

const keyOf = (ref: InvocationRef) => `${ref.botId}/${ref.id}`;

/** The runs this executor has going, so a cancellation heard on the bus can stop the right one. */
export class RunningInvocations {
  private readonly runs = new Map<string, AbortController>();

  /** Registers a run; its signal aborts when the invocation is cancelled. Call `done` when it ends. */
  start(ref: InvocationRef): { signal: AbortSignal; stop: () => void; done: () => void } {
    const controller = new AbortController();
    const key = keyOf(ref);
    this.runs.set(key, controller);
    return {
      signal: controller.signal,
      stop: () => controller.abort(),
      done: () => {
        if (this.runs.get(key) === controller) this.runs.delete(key);
      },
    };
  }

  /** Stops the run of `ref` if this executor has it; false otherwise (another executor has it, or none). */
  cancel(ref: InvocationRef): boolean {
    const controller = this.runs.get(keyOf(ref));
    controller?.abort();
    return controller !== undefined;
  }

  get size(): number {
    return this.runs.size;
  }
}
