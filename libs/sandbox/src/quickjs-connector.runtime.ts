import type { CompileResult, ConnectorRunRequest, ConnectorRunResult, ConnectorRuntime } from '@gi/domain';
import { ConnectorCompiler } from './compile-connector';
import { loadQuickJs, reloadQuickJs } from './quickjs-module';
import { runConnector } from './run-connector';
import { resolveLimits, type QuickJsRuntimeOptions } from './sandbox-options';

/**
 * The Custom Code runtime: every run gets a fresh QuickJS runtime and context with its own memory,
 * stack and time limits. The WebAssembly module is loaded once per process.
 */
export async function createQuickJsRuntime(options: QuickJsRuntimeOptions = {}): Promise<ConnectorRuntime> {
  const limits = resolveLimits(options);
  let module = await loadQuickJs();
  let compiler = new ConnectorCompiler(module, limits);
  let closed = false;

  /** After a fault of the engine itself the module may be damaged: start again from a fresh one. */
  async function recover(): Promise<void> {
    module = await reloadQuickJs();
    compiler = new ConnectorCompiler(module, limits);
  }

  return {
    compile(code: string): CompileResult {
      if (closed) throw new Error('The connector runtime is closed.');
      return compiler.compile(code);
    },

    async run(request: ConnectorRunRequest): Promise<ConnectorRunResult> {
      if (closed) throw new Error('The connector runtime is closed.');
      if (!(request.timeoutMs > 0)) throw new RangeError(`A connector run needs a positive timeoutMs, not ${request.timeoutMs}.`);
      const started = performance.now();
      try {
        const { result, damaged } = await runConnector(module, limits, request);
        if (damaged) await recover();
        return result;
      } catch (error) {
        await recover();
        const message = `The sandbox failed while running the connector: ${(error as Error).message}`;
        return { kind: 'failed', reason: 'threw', message, logs: [{ at: Date.now(), level: 'error', message }], durationMs: performance.now() - started };
      }
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      compiler.dispose();
    },
  };
}
