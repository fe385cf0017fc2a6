import type { CompileResult } from '@gi/domain';
import type { QuickJSContext, QuickJSRuntime } from 'quickjs-emscripten';
import { CONNECTOR_FILENAME, locateInStack, toUserLine, wrapConnector } from './connector-source';
import { EngineInstance, ENGINE_OWN_BYTES } from './engine-instance';
import type { SandboxEnvironment } from './sandbox-options';

/** Compiling never runs connector code, so one long-lived context, on an engine instance of its own, serves every check. */
export class ConnectorCompiler {
  private readonly runtime: QuickJSRuntime;
  private readonly context: QuickJSContext;

  static async create(env: SandboxEnvironment): Promise<ConnectorCompiler> {
    return new ConnectorCompiler(await EngineInstance.create(), env);
  }

  private constructor(instance: EngineInstance, env: SandboxEnvironment) {
    instance.capMemory(env.defaults.memoryBytes + ENGINE_OWN_BYTES);
    this.runtime = instance.module.newRuntime();
    this.runtime.setMemoryLimit(env.defaults.memoryBytes);
    this.runtime.setMaxStackSize(env.maxStackBytes);
    this.context = this.runtime.newContext();
  }

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
    return { ok: false, message, line, column: at?.column ?? 1 };
  }

  dispose(): void {
    this.context.dispose();
    this.runtime.dispose();
  }
}
