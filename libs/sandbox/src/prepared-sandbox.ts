import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten';
import { connectorFunctionSource, CONNECTOR_FILENAME, wrapConnector } from './connector-source';
import { ContextApi } from './context-api';
import type { EngineInstance } from './engine-instance';
import type { SandboxEnvironment } from './sandbox-options';

/**
 * A QuickJS runtime and context nobody used before, in an engine instance of its own, with the
 * Context API installed and, when it was prepared for a connector, that connector already
 * compiled. Sandboxes are made while the thread is idle, and each serves one run only: nothing one
 * run does is visible to the next.
 */
export class PreparedSandbox {
  readonly runtime: QuickJSRuntime;
  readonly context: QuickJSContext;
  readonly api: ContextApi;
  private readonly handles: QuickJSHandle[] = [];
  /** The connector compiled ahead: its cache key, the code it was compiled from, and the function. */
  private preloaded: { cacheKey: string; code: string; fn: QuickJSHandle } | null = null;

  constructor(
    readonly instance: EngineInstance,
    env: SandboxEnvironment,
    memoryBytes: number,
  ) {
    this.runtime = instance.module.newRuntime();
    this.runtime.setMemoryLimit(memoryBytes);
    this.runtime.setMaxStackSize(env.maxStackBytes);
    this.context = this.runtime.newContext();
    this.api = new ContextApi(this.context, env);
  }

  /**
   * Compiles a connector ahead of its run. For well-formed code this runs nothing: evaluating the
   * wrapped code only creates the connector function. Code that closes its function body early
   * would run statements here, outside its run; so anything that runs is interrupted at its first
   * check, finds the Context API unbound, and the sandbox is kept only when the result is the whole
   * connector function. False: the sandbox must be disposed, and the code compiled when it runs.
   */
  preload(cacheKey: string, code: string): boolean {
    this.runtime.setInterruptHandler(() => true);
    try {
      const result = this.context.evalCode(wrapConnector(code), CONNECTOR_FILENAME);
      if (result.error) {
        result.error.dispose();
        return false;
      }
      const fn = this.keep(result.value);
      if (this.api.sourceOf(fn) !== connectorFunctionSource(code)) return false;
      this.preloaded = { cacheKey, code, fn };
      return true;
    } finally {
      this.runtime.removeInterruptHandler();
    }
  }

  /** The connector function compiled ahead for exactly this code, if any. */
  preloadedFor(code: string): QuickJSHandle | null {
    return this.preloaded?.code === code ? this.preloaded.fn : null;
  }

  /** The connector this sandbox was prepared for; null for a sandbox prepared for any connector. */
  get preloadedKey(): string | null {
    return this.preloaded?.cacheKey ?? null;
  }

  get preloadedCode(): string | null {
    return this.preloaded?.code ?? null;
  }

  /** Holds a handle until the sandbox is disposed. */
  keep(handle: QuickJSHandle): QuickJSHandle {
    this.handles.push(handle);
    return handle;
  }

  /** Frees the engine; throws when QuickJS finds objects it lost track of (the module is then unusable). */
  dispose(): void {
    this.api.dispose();
    for (const handle of this.handles.reverse()) if (handle.alive) handle.dispose();
    this.handles.length = 0;
    if (this.runtime.alive) this.runtime.removeInterruptHandler();
    if (this.context.alive) this.context.dispose();
    if (this.runtime.alive) this.runtime.dispose();
  }
}
