import { ConnectorRun, type RunInput } from '../run/run-connector';
import type { SandboxResult } from '../run/run-verdict';
import type { Sandbox } from './sandbox';
import type { SandboxEnvironment } from '../sandbox-options';
import { SandboxPool } from './sandbox-pool';

/**
 * Runs connectors on the current thread, each in a sandbox of the thread's pool that is reset to its
 * memory image once the run ends. A connector that does not wait on the host runs start to end in
 * the caller's turn, and its sandbox is ready again before the next run starts.
 */
export class SandboxEngine {
  private constructor(private readonly pool: SandboxPool) {}

  static async create(env: SandboxEnvironment): Promise<SandboxEngine> {
    const pool = new SandboxPool(env);
    await pool.warm();
    return new SandboxEngine(pool);
  }

  run(input: RunInput): Promise<SandboxResult> {
    return Promise.resolve(this.start(input));
  }

  /**
   * Starts a run: its result when it ended in the caller's turn (it never waited on the host), else
   * a promise of it. A worker tells the pool so: a thread whose runs all wait is free for others.
   */
  start(input: RunInput): SandboxResult | Promise<SandboxResult> {
    const started = performance.now();
    let sandbox: Sandbox | null;
    try {
      sandbox = this.pool.take(input);
    } catch (error) {
      return failed(`The sandbox could not be prepared: ${(error as Error).message}`, started);
    }
    if (sandbox) return this.runIn(sandbox, input, started);
    return this.pool.make(input).then(
      (made) => this.runIn(made, input, started),
      (error: unknown) => failed(`The sandbox could not be prepared: ${(error as Error).message}`, started),
    );
  }

  dispose(): void {
    this.pool.dispose();
  }

  /**
   * A fault of the engine instance itself, not of the connector (the engine aborted, or the thread's
   * native stack ran out under code nested too deeply for it), fails the run, and the sandbox is not
   * given back: its instance is dropped.
   */
  private runIn(sandbox: Sandbox, input: RunInput, started: number): SandboxResult | Promise<SandboxResult> {
    const fault = (error: unknown) =>
      isStackExhausted(error)
        ? failed('The connector nested code or calls too deeply for the engine (stack overflow).', started, 'limit')
        : failed(`The sandbox failed while running the connector: ${(error as Error).message}`, started);
    let run: ConnectorRun;
    try {
      run = new ConnectorRun(sandbox, input);
      const result = run.start();
      if (result) {
        this.pool.giveBack(sandbox, input);
        return result;
      }
    } catch (error) {
      return fault(error);
    }
    input.onWaitsOnHost?.();
    return run.finish().then((result) => {
      this.pool.giveBack(sandbox, input);
      return result;
    }, fault);
  }
}

function failed(message: string, started: number, reason: 'threw' | 'limit' = 'threw'): SandboxResult {
  return { kind: 'failed', reason, message, logs: [{ at: Date.now(), level: 'error', message }], durationMs: performance.now() - started };
}

/** Node's own stack overflow, raised through the engine's WebAssembly frames. */
const isStackExhausted = (error: unknown) => (error as Error)?.name === 'RangeError' && /Maximum call stack size exceeded/.test((error as Error).message);
