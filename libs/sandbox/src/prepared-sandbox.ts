import type { QuickJSContext, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten';
import type { SandboxLimits } from './sandbox-options';

/**
 * A fresh QuickJS runtime and context, not yet used by any run.
 * Creating a context is most of a run's fixed cost, so one is made ready while the thread is idle
 * and handed to the next run; every run still gets a context nobody used before.
 */
export class PreparedSandbox {
  readonly runtime: QuickJSRuntime;
  readonly context: QuickJSContext;

  constructor(module: QuickJSWASMModule, limits: SandboxLimits) {
    this.runtime = module.newRuntime();
    this.runtime.setMemoryLimit(limits.memoryLimitBytes);
    this.runtime.setMaxStackSize(limits.maxStackBytes);
    this.context = this.runtime.newContext();
  }

  /** Frees the engine; throws when QuickJS finds objects it lost track of (the module is then unusable). */
  dispose(): void {
    if (this.context.alive) this.context.dispose();
    if (this.runtime.alive) this.runtime.dispose();
  }
}
