import type { CompileResult } from '@gi/domain';
import type { QuickJSContext, QuickJSRuntime } from 'quickjs-emscripten';
import { CONNECTOR_FILENAME, locateInStack, toUserLine, wrapConnector } from './connector-source';
import { EngineInstance, ENGINE_OWN_BYTES } from '../engine/engine-instance';
import { COMPILE_STACK_BYTES, type SandboxEnvironment } from '../sandbox-options';

/** Why code nested too deeply for the compiler's stack does not compile. */
export const TOO_DEEP_TO_COMPILE = 'SyntaxError: the code nests too deeply to be compiled (stack overflow)';

/** What compiling answers for code whose compilation made the engine itself fail (where is not known). */
const tooDeepToCompile = (): CompileResult => ({ ok: false, message: TOO_DEEP_TO_COMPILE, line: 1, column: 1 });

/** A QuickJS runtime and context that only ever compile, on an engine instance of their own. */
class CompilingEngine {
  private readonly runtime: QuickJSRuntime;
  private readonly context: QuickJSContext;

  static async create(env: SandboxEnvironment): Promise<CompilingEngine> {
    return new CompilingEngine(await EngineInstance.create(), env);
  }

  private constructor(instance: EngineInstance, env: SandboxEnvironment) {
    instance.capMemory(env.defaults.memoryBytes + ENGINE_OWN_BYTES);
    this.runtime = instance.module.newRuntime();
    this.runtime.setMemoryLimit(env.defaults.memoryBytes);
    this.runtime.setMaxStackSize(COMPILE_STACK_BYTES);
    this.context = this.runtime.newContext();
  }

  /** The result; throws when the engine itself failed (it is then not to be used again). */
  compile(code: string): CompileResult {
    const ctx = this.context;
    const result = ctx.evalCode(wrapConnector(code), CONNECTOR_FILENAME, { compileOnly: true });
    if (!result.error) {
      result.value.dispose();
      return { ok: true };
    }
    const error = ctx.dump(result.error) as { name?: unknown; message?: unknown; stack?: unknown; lineNumber?: unknown } | null;
    result.error.dispose();
    const message = `${String(error?.name ?? 'SyntaxError')}: ${String(error?.message ?? 'the code does not compile')}`;
    const at = locateInStack(String(error?.stack ?? ''));
    const line = at?.line ?? (typeof error?.lineNumber === 'number' ? toUserLine(error.lineNumber) : 1);
    // Where the nesting became too deep for the compiler's stack.
    return { ok: false, message: /^\w*Error: stack overflow/.test(message) ? TOO_DEEP_TO_COMPILE : message, line, column: at?.column ?? 1 };
  }

  dispose(): void {
    this.context.dispose();
    this.runtime.dispose();
  }
}

/**
 * Checks connector code at deploy, on the calling thread. Compiling never runs connector code, so one
 * long-lived engine serves every check. Should the engine itself fail on some code (its native stack
 * exhausted, say), that code is refused like any that does not compile, and the engine, whose state
 * can no longer be trusted, is replaced by a spare made ahead.
 */
export class ConnectorCompiler {
  private spare: CompilingEngine | null = null;
  private closed = false;


  static async create(env: SandboxEnvironment): Promise<ConnectorCompiler> {
    const [engine, spare] = await Promise.all([CompilingEngine.create(env), CompilingEngine.create(env)]);
    const compiler = new ConnectorCompiler(engine, env);
    compiler.spare = spare;
    return compiler;
  }

  private constructor(
    private engine: CompilingEngine,
    private readonly env: SandboxEnvironment,
  ) {}

  compile(code: string): CompileResult {
    try {
      return this.engine.compile(code);
    } catch {
      this.replaceEngine();
      return tooDeepToCompile();
    }
  }

  dispose(): void {
    this.closed = true;
    this.engine.dispose();
    this.spare?.dispose();
  }

  /**
   * The spare takes over and a new one is made. Without a spare at hand (two failures within
   * moments) the failed engine goes on until the new one is ready. A failed engine is dropped, never
   * disposed: freeing a runtime in an unknown state could fail as well.
   */
  private replaceEngine(): void {
    const failed = this.spare === null;
    if (this.spare) this.engine = this.spare;
    this.spare = null;
    CompilingEngine.create(this.env).then(
      (made) => {
        if (this.closed) made.dispose();
        else if (failed) this.engine = made;
        else if (this.spare) made.dispose();
        else this.spare = made;
      },
      () => undefined,
    );
  }
}
