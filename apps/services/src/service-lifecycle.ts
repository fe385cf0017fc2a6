import type { Logger } from '@gi/observability';

type Step = () => Promise<unknown> | unknown;
type FatalHook = (error: unknown) => Promise<unknown> | unknown;

/** How long the fatal hooks may take together before the process ends anyway. */
const FATAL_HOOKS_MS = 3000;

/**
 * How a service process ends.
 *
 * SIGTERM or SIGINT runs the shutdown steps in order (stop taking work, finish or hand back what is in
 * flight, close connections), then logs "stopped". The handlers are in place from the moment the
 * service starts opening things: a signal that comes before the steps are known (just after
 * "listening", say) waits for them instead of killing the process with its work half done.
 *
 * An error nothing handled (an exception or a rejection) is fatal: it is logged, the fatal hooks run
 * (each given a moment; together at most FATAL_HOOKS_MS), and the process exits with code 1.
 */
export class ServiceLifecycle {
  private steps: Step[] | null = null;
  private signal: string | null = null;
  private stopping = false;
  private failing = false;
  private readonly fatalHooks: FatalHook[] = [];
  private readonly lastSteps: Step[] = [];

  /** `facts` (the release) go on the stopping and stopped lines. */
  constructor(
    private readonly logger: Logger,
    private readonly facts: Record<string, unknown> = {},
  ) {
    process.once('SIGTERM', () => this.stop('SIGTERM'));
    process.once('SIGINT', () => this.stop('SIGINT'));
    process.on('uncaughtException', (error) => void this.fail(error));
    process.on('unhandledRejection', (reason) => void this.fail(reason));
  }

  /** The steps a signal runs; a signal already received runs them at once. */
  onShutdown(steps: Step[]): void {
    this.steps = steps;
    if (this.signal) void this.shutdown(this.signal);
  }

  /** A step run after those of onShutdown, whatever they are (exporting the last spans). */
  atLast(step: Step): void {
    this.lastSteps.push(step);
  }

  /** Runs `hook` with the error before a fatal error ends the process. */
  onFatal(hook: FatalHook): void {
    this.fatalHooks.push(hook);
  }

  private stop(signal: string): void {
    this.signal ??= signal;
    if (this.steps) void this.shutdown(signal);
  }

  private async shutdown(signal: string): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    // Keeps the process up until the last step ran: a step that waits on something unreferenced (a
    // worker thread's exit, say) must not let the event loop drain and end the process halfway.
    const hold = setInterval(() => undefined, 60_000);
    const started = performance.now();
    this.logger.info({ ...this.facts, signal }, 'shutting down');
    for (const step of [...(this.steps ?? []), ...this.lastSteps]) {
      try {
        await step();
      } catch (err) {
        this.logger.error({ err }, 'shutdown step failed');
      }
    }
    this.logger.info({ ...this.facts, signal, shutdownMs: Math.round(performance.now() - started) }, 'stopped');
    this.logger.flush();
    clearInterval(hold);
  }

  private async fail(error: unknown): Promise<void> {
    if (this.failing) return;
    this.failing = true;
    try {
      this.logger.fatal({ err: error }, 'fatal error; the process ends');
      const hooks = Promise.allSettled(this.fatalHooks.map(async (hook) => hook(error)));
      await Promise.race([hooks, new Promise((resolve) => setTimeout(resolve, FATAL_HOOKS_MS))]);
      this.logger.flush();
    } finally {
      process.exit(1);
    }
  }
}
