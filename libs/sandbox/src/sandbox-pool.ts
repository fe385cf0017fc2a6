import { EngineInstance, ENGINE_OWN_BYTES } from './engine-instance';
import { PreparedSandbox } from './prepared-sandbox';
import type { RunInput } from './run-input';
import { MiB, type SandboxEnvironment } from './sandbox-options';

/** Idle engine instances a thread keeps, each with a sandbox ready. */
const IDLE_INSTANCES = 8;
/** An instance that grew past this during a run is dropped afterwards, and its memory freed. */
const IDLE_MEMORY_BYTES = 32 * MiB;
/** A connector not run within this many runs of the thread gives its ready sandbox to another. */
const STALE_AFTER_RUNS = 64;
/** Connectors remembered, to tell one that runs again from one that ran once. */
const REMEMBERED = 256;

/** The memory a run's instance may grow to: its limit for the connector's data, and the engine's own. */
const capOf = (input: RunInput) => input.limits.memoryBytes + ENGINE_OWN_BYTES;

/**
 * The engine instances of one thread and the sandboxes ready in them. Each idle instance holds one
 * sandbox: one for any connector (Context API installed), or one for a connector that ran more
 * than once lately, with its code compiled in. This is the cache of compiled code per integration
 * version: QuickJS can neither run bytecode in another runtime nor serialize it through
 * quickjs-emscripten, so code is compiled into the very sandbox that will run it, while the thread
 * is idle. A run takes a sandbox and its instance; when it ends, the instance gets a new sandbox.
 */
export class SandboxPool {
  /** Ready sandboxes, each in an idle instance, least recently used first. */
  private readonly idle: PreparedSandbox[] = [];
  /** Cache key -> the code and the number of the thread's run that last ran it, least recent first. */
  private readonly recent = new Map<string, { code: string; run: number }>();
  /** Code that cannot be compiled ahead (it runs statements outside its function body), by cache key. */
  private readonly compiledWhenRun = new Map<string, string>();
  private runs = 0;
  private adding: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly env: SandboxEnvironment) {}

  /**
   * Makes the first instances ready; fails when the engine cannot be loaded. Two, so that a run
   * arriving before the previous one's sandbox is freed finds one ready.
   */
  async warm(): Promise<void> {
    for (const instance of await Promise.all([EngineInstance.create(), EngineInstance.create()])) this.idle.push(this.prepare(instance, null));
  }

  /**
   * A ready sandbox for this run, in an instance whose memory is capped at the run's limit: the one
   * with its connector compiled, else one for any connector, else one made now in an idle instance.
   * Null when no instance is idle.
   */
  takeIdle(input: RunInput): PreparedSandbox | null {
    const capBytes = capOf(input);
    const sandbox = this.findIdle(input, capBytes);
    sandbox?.instance.capMemory(capBytes);
    return sandbox;
  }

  /** A sandbox for this run in a new instance. */
  async takeNew(input: RunInput): Promise<PreparedSandbox> {
    const instance = await EngineInstance.create();
    instance.capMemory(capOf(input));
    return new PreparedSandbox(instance, this.env, input.limits.memoryBytes);
  }

  /**
   * Takes back the instance of a finished run (its sandbox freed; `released` says whether cleanly)
   * and makes a sandbox ready in it. An instance that grew large, ran out of memory or could not be
   * freed cleanly is dropped instead.
   */
  recycle(instance: EngineInstance, ran: RunInput, released: boolean): void {
    const again = this.recent.get(ran.cacheKey)?.code === ran.code;
    this.remember(ran);
    if (!this.closed && released && !instance.exhausted && instance.memoryBytes <= IDLE_MEMORY_BYTES) {
      try {
        this.idle.push(this.prepare(instance, again ? ran : null));
      } catch {
        // The instance is damaged: dropped, its memory freed with it.
      }
    }
    while (this.idle.length > IDLE_INSTANCES) this.drop(0);
  }

  dispose(): void {
    this.closed = true;
    while (this.idle.length > 0) this.drop(0);
  }

  private findIdle(input: RunInput, capBytes: number): PreparedSandbox | null {
    const fits = (sandbox: PreparedSandbox) => sandbox.instance.memoryBytes <= capBytes;
    let index = this.idle.findIndex((s) => s.preloadedKey === input.cacheKey && s.preloadedCode === input.code && fits(s));
    if (index < 0) index = this.idle.findLastIndex((s) => s.preloadedKey === null && fits(s));
    if (index >= 0) return this.idle.splice(index, 1)[0];
    // Only sandboxes prepared for other connectors: the least recently used makes room for a fresh one,
    // and the thread gets one more instance, made once it is idle. So a thread keeps as many
    // instances as the connectors that alternate on it need, up to a limit.
    index = this.idle.findIndex(fits);
    if (index < 0) return null;
    if (this.idle.length < IDLE_INSTANCES) setImmediate(() => void this.addInstance());
    const [other] = this.idle.splice(index, 1);
    try {
      other.dispose();
      return this.prepare(other.instance, null);
    } catch {
      return null;
    }
  }

  /** A sandbox in `instance`, with `connector` compiled in when it can be. */
  private prepare(instance: EngineInstance, connector: RunInput | null): PreparedSandbox {
    instance.capMemory(this.env.defaults.memoryBytes + ENGINE_OWN_BYTES);
    const sandbox = new PreparedSandbox(instance, this.env, this.env.defaults.memoryBytes);
    if (!connector || !this.mayPreload(connector) || sandbox.preload(connector.cacheKey, connector.code)) return sandbox;
    sandbox.dispose();
    this.compiledWhenRun.set(connector.cacheKey, connector.code);
    if (this.compiledWhenRun.size > REMEMBERED) this.compiledWhenRun.delete(this.compiledWhenRun.keys().next().value as string);
    return new PreparedSandbox(instance, this.env, this.env.defaults.memoryBytes);
  }

  /**
   * Whether a connector may get a sandbox of its own: one place is always left for any connector,
   * and places are taken only from connectors that have not run lately. With more connectors
   * alternating than places, the ones without a place compile when they run, instead of every
   * run preparing a sandbox that is dropped before it is used.
   */
  private mayPreload({ cacheKey, code }: RunInput): boolean {
    if (this.compiledWhenRun.get(cacheKey) === code) return false;
    const preloaded = this.idle.filter((sandbox) => sandbox.preloadedKey !== null);
    if (preloaded.length < IDLE_INSTANCES - 1) return true;
    const stale = preloaded.find((sandbox) => (this.recent.get(sandbox.preloadedKey as string)?.run ?? 0) <= this.runs - STALE_AFTER_RUNS);
    if (!stale) return false;
    this.drop(this.idle.indexOf(stale));
    return true;
  }

  private remember(input: RunInput): void {
    this.recent.delete(input.cacheKey);
    this.recent.set(input.cacheKey, { code: input.code, run: ++this.runs });
    if (this.recent.size > REMEMBERED) this.recent.delete(this.recent.keys().next().value as string);
  }

  /** Drops the idle instance at `index` with its sandbox. */
  private drop(index: number): void {
    const [sandbox] = this.idle.splice(index, 1);
    try {
      sandbox.dispose();
    } catch {
      // A damaged instance cannot free anything; it is dropped whole.
    }
  }

  /** One more idle instance with a sandbox for any connector, made while the thread is idle. */
  private addInstance(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.adding ??= EngineInstance.create()
      .then((instance) => {
        if (!this.closed && this.idle.length < IDLE_INSTANCES) this.idle.push(this.prepare(instance, null));
      })
      .catch(() => undefined)
      .finally(() => (this.adding = null));
    return this.adding;
  }
}
