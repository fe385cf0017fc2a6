import { ENGINE_OWN_BYTES } from './engine-instance';
import type { RunInput } from './run-input';
import { Sandbox } from './sandbox';
import { MiB, type SandboxEnvironment } from './sandbox-options';

/** Idle sandboxes a thread keeps for the connectors that ran on it lately. */
const IDLE_SANDBOXES = 8;
/** Sandboxes kept ready for connectors that have none yet; made again while the thread is idle. */
const SPARES = 2;
/** A sandbox that grew past this during a run is dropped afterwards, and its memory freed. */
const IDLE_MEMORY_BYTES = 32 * MiB;
/** Connectors remembered as ones whose code cannot be compiled ahead. */
const REMEMBERED = 256;


/** The idle sandboxes of one connector (cache key), all made for the same code. */
interface Ready {
  code: string;
  sandboxes: Sandbox[];
}

/**
 * The sandboxes of one thread. Each serves one connector: the first run of a connector takes a
 * spare and compiles the connector into it; later runs take it, or another of the connector's,
 * ready with the code compiled. This is the cache of compiled code per integration version: QuickJS
 * can neither run bytecode in another runtime nor serialize it through quickjs-emscripten, so the
 * code is compiled into the very sandbox (and memory image) that runs it, run after run.
 */
export class SandboxPool {
  /** Cache key -> idle sandboxes, least recently used key first. */
  private readonly ready = new Map<string, Ready>();
  private readonly spares: Sandbox[] = [];
  /** Code that cannot be compiled ahead (it runs statements outside its function body), by cache key. */
  private readonly compiledWhenRun = new Map<string, string>();
  private refilling: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly env: SandboxEnvironment) {}

  /** Makes the first spares; fails when the engine cannot be loaded. */
  async warm(): Promise<void> {
    this.spares.push(...(await Promise.all(Array.from({ length: SPARES }, () => Sandbox.create(this.env)))));
  }

  /** A sandbox ready for this run; null when none is at hand. */
  take(input: RunInput): Sandbox | null {
    return this.takeReady(input) ?? this.takeSpare(input);
  }

  /** A sandbox for this run in a new engine instance. */
  async make(input: RunInput): Promise<Sandbox> {
    const sandbox = await Sandbox.create(this.env);
    this.compileFor(sandbox, input);
    return sandbox;
  }

  /** Takes a sandbox back after its run: reset, for the next run of its connector; dropped (with its memory) when it grew large. */
  giveBack(sandbox: Sandbox, ran: RunInput): void {
    if (this.closed || sandbox.instance.memoryBytes > IDLE_MEMORY_BYTES) return;
    sandbox.reset();
    const entry = this.ready.get(ran.cacheKey);
    this.ready.delete(ran.cacheKey);
    if (entry && entry.code === ran.code) entry.sandboxes.push(sandbox);
    this.ready.set(ran.cacheKey, entry && entry.code === ran.code ? entry : { code: ran.code, sandboxes: [sandbox] });
    this.trim();
  }

  dispose(): void {
    this.closed = true;
    this.ready.clear();
    this.spares.length = 0;
  }

  private takeReady({ cacheKey, code, limits }: RunInput): Sandbox | null {
    const entry = this.ready.get(cacheKey);
    if (!entry) return null;
    this.ready.delete(cacheKey);
    if (entry.code !== code) return null; // the key came back with other code: its sandboxes are of no use
    // One whose memory grew within the limit of another run of the same code would not fit this run's.
    const capBytes = limits.memoryBytes + ENGINE_OWN_BYTES;
    const index = entry.sandboxes.findIndex((sandbox) => sandbox.instance.memoryBytes <= capBytes);
    const [sandbox] = index < 0 ? [null] : entry.sandboxes.splice(index, 1);
    if (entry.sandboxes.length > 0) this.ready.set(cacheKey, entry);
    return sandbox;
  }

  private takeSpare(input: RunInput): Sandbox | null {
    const spare = this.spares.pop() ?? null;
    if (spare) this.compileFor(spare, input);
    this.refill();
    return spare;
  }

  /** Compiles the run's connector into a sandbox that never ran, unless its code is known not to allow it. */
  private compileFor(sandbox: Sandbox, { cacheKey, code }: RunInput): void {
    if (this.compiledWhenRun.get(cacheKey) === code || sandbox.compileAhead({ cacheKey, code })) return;
    this.compiledWhenRun.delete(cacheKey);
    this.compiledWhenRun.set(cacheKey, code);
    if (this.compiledWhenRun.size > REMEMBERED) this.compiledWhenRun.delete(this.compiledWhenRun.keys().next().value as string);
  }

  /** Keeps at most IDLE_SANDBOXES idle, dropping those of the connectors that ran least recently. */
  private trim(): void {
    let count = 0;
    for (const entry of this.ready.values()) count += entry.sandboxes.length;
    for (const [key, entry] of this.ready) {
      if (count <= IDLE_SANDBOXES) return;
      const dropped = Math.min(entry.sandboxes.length, count - IDLE_SANDBOXES);
      entry.sandboxes.splice(0, dropped);
      count -= dropped;
      if (entry.sandboxes.length === 0) this.ready.delete(key);
    }
  }

  /** Makes spares again once the thread is idle, one at a time. */
  private refill(): void {
    if (this.refilling || this.closed || this.spares.length >= SPARES) return;
    this.refilling = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => (this.closed ? null : Sandbox.create(this.env)))
      .then((sandbox) => {
        if (sandbox && !this.closed) this.spares.push(sandbox);
      })
      .catch(() => undefined)
      .finally(() => {
        this.refilling = null;
        this.refill();
      });
  }
}
