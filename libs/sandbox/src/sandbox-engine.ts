import type { ConnectorRunResult } from '@gi/domain';
import type { PreparedSandbox } from './prepared-sandbox';
import { runConnector, type RunInput } from './run-connector';
import type { SandboxEnvironment } from './sandbox-options';
import { SandboxPool } from './sandbox-pool';

/**
 * Runs connectors on the current thread: a fresh sandbox per run, taken from the thread's pool of
 * engine instances. After a run the pool makes a sandbox ready again, with the connectors that
 * ran last already compiled, so the next run waits neither for a context nor for its compiler.
 */
export class SandboxEngine {
  private readonly finished: Array<{ sandbox: PreparedSandbox; input: RunInput; release: () => boolean }> = [];

  private constructor(private readonly pool: SandboxPool) {}

  static async create(env: SandboxEnvironment): Promise<SandboxEngine> {
    const pool = new SandboxPool(env);
    await pool.warm();
    return new SandboxEngine(pool);
  }

  async run(input: RunInput): Promise<ConnectorRunResult> {
    const started = performance.now();
    const failed = (message: string): ConnectorRunResult => ({
      kind: 'failed',
      reason: 'threw',
      message,
      logs: [{ at: Date.now(), level: 'error', message }],
      durationMs: performance.now() - started,
    });
    let sandbox;
    try {
      sandbox = await this.sandboxFor(input);
    } catch (error) {
      return failed(`The sandbox could not be prepared: ${(error as Error).message}`);
    }
    try {
      const outcome = await runConnector(sandbox, input);
      this.afterRun(sandbox, input, outcome.release);
      return outcome.result;
    } catch (error) {
      // A fault of the engine instance itself, not of the connector: the instance is dropped.
      return failed(`The sandbox failed while running the connector: ${(error as Error).message}`);
    }
  }

  dispose(): void {
    this.pool.dispose();
  }

  /**
   * An idle instance's sandbox. With none idle, as when runs follow each other without a pause, the
   * oldest finished run hands its instance on; a new instance is made only when no run has one.
   */
  private sandboxFor(input: RunInput): PreparedSandbox | Promise<PreparedSandbox> {
    let sandbox = this.pool.takeIdle(input);
    if (!sandbox && this.finished.length > 0) {
      this.cleanUp(1);
      sandbox = this.pool.takeIdle(input);
    }
    return sandbox ?? this.pool.takeNew(input);
  }

  /**
   * Reply first; free the run's sandbox and make its instance ready again once the caller has its
   * result, when the thread is idle (or when the next run needs the instance).
   */
  private afterRun(sandbox: PreparedSandbox, input: RunInput, release: () => boolean): void {
    this.finished.push({ sandbox, input, release });
    if (this.finished.length === 1) setImmediate(() => this.cleanUp());
  }

  /** Frees the sandboxes of the oldest `count` finished runs and gives their instances back. */
  private cleanUp(count = Infinity): void {
    for (const { sandbox, input, release } of this.finished.splice(0, count)) this.pool.recycle(sandbox.instance, input, release());
  }
}
