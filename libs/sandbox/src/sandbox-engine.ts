import type { CompileResult, ConnectorRunResult } from '@gi/domain';
import type { QuickJSWASMModule } from 'quickjs-emscripten';
import { ConnectorCompiler } from './compile-connector';
import { PreparedSandbox } from './prepared-sandbox';
import { loadQuickJs, reloadQuickJs } from './quickjs-module';
import { runConnector, type RunInput } from './run-connector';
import type { SandboxEnvironment } from './sandbox-options';

/**
 * Runs connectors on the current thread: one QuickJS module, a fresh sandbox per run, and one spare
 * sandbox made ready after each run so the next one does not wait for a context to be built.
 */
export class SandboxEngine {
  private spare: PreparedSandbox | null = null;
  private compiler: ConnectorCompiler | null = null;
  private recovering: Promise<void> | null = null;
  private readonly releases: Array<() => boolean> = [];

  private constructor(
    private module: QuickJSWASMModule,
    private readonly env: SandboxEnvironment,
  ) {}

  static async create(env: SandboxEnvironment): Promise<SandboxEngine> {
    const engine = new SandboxEngine(await loadQuickJs(), env);
    engine.prepareSpare();
    return engine;
  }

  compile(code: string): CompileResult {
    this.compiler ??= new ConnectorCompiler(this.module, this.env.limits);
    return this.compiler.compile(code);
  }

  async run(input: RunInput): Promise<ConnectorRunResult> {
    if (this.recovering) await this.recovering;
    const started = performance.now();
    const sandbox = this.takeSandbox();
    try {
      const outcome = await runConnector(sandbox, this.env, input);
      this.deferRelease(outcome.release);
      return outcome.result;
    } catch (error) {
      // A fault of the engine itself, not of the connector: start again from a fresh module.
      void this.recover();
      const message = `The sandbox failed while running the connector: ${(error as Error).message}`;
      return { kind: 'failed', reason: 'threw', message, logs: [{ at: Date.now(), level: 'error', message }], durationMs: performance.now() - started };
    }
  }

  dispose(): void {
    try {
      this.spare?.dispose();
      this.compiler?.dispose();
    } catch {
      // A damaged module cannot free anything; it is dropped with the engine.
    }
    this.spare = null;
    this.compiler = null;
  }

  /**
   * Reply first; free the engine and build the next spare once the caller has its result. Runs
   * that follow each other without a turn of the event loop free the earlier ones themselves, so
   * used sandboxes never pile up.
   */
  private deferRelease(release: () => boolean): void {
    this.releases.push(release);
    if (this.releases.length > 2) this.cleanUp();
    else if (this.releases.length === 1) setImmediate(() => this.cleanUp());
  }

  private cleanUp(): void {
    const releases = this.releases.splice(0);
    const damaged = releases.map((release) => release()).includes(false);
    if (damaged) void this.recover();
    else this.prepareSpare();
  }

  private takeSandbox(): PreparedSandbox {
    const sandbox = this.spare ?? new PreparedSandbox(this.module, this.env.limits);
    this.spare = null;
    return sandbox;
  }

  private prepareSpare(): void {
    if (this.spare || this.recovering) return;
    try {
      this.spare = new PreparedSandbox(this.module, this.env.limits);
    } catch {
      void this.recover();
    }
  }

  private recover(): Promise<void> {
    this.recovering ??= (async () => {
      // Whatever the old module held is unusable: drop it without freeing.
      this.spare = null;
      this.compiler = null;
      this.module = await reloadQuickJs();
      this.recovering = null;
      this.prepareSpare();
    })();
    return this.recovering;
  }
}
