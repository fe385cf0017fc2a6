import { LruMap } from '@gi/domain';
import { ENGINE_OWN_BYTES } from './engine-instance';
import { modulesNamedIn } from '../host/globals-library';
import type { RunInput } from '../run/run-input';
import { Sandbox } from './sandbox';
import { MiB, RUNS_PER_THREAD, type SandboxEnvironment } from '../sandbox-options';

/**
 * Idle sandboxes a thread keeps for the connectors that ran on it lately: as many as runs it may hold
 * at once. A connector waiting on HTTP holds that many sandboxes of its own; with fewer kept, each
 * wave of its runs made the rest again (a new engine instance each: 4x the CPU per call).
 */
const IDLE_SANDBOXES = RUNS_PER_THREAD;
/** The memory of the idle sandboxes of a thread, added up, at most (16 fresh ones; fewer that grew). */
const IDLE_SANDBOXES_BYTES = 256 * MiB;
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
  private readonly compiledWhenRun = new LruMap<string, string>(REMEMBERED);
  /** Modules of globals connectors loaded during their runs (their code names them in ways a scan misses), by cache key. */
  private readonly modulesLearned = new LruMap<string, string[]>(REMEMBERED);
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
    if (!this.compileFor(sandbox, input)) throw new Error("the engine failed while compiling the connector's code");
    return sandbox;
  }

  /**
   * Takes a sandbox back after its run: reset, for the next run of its connector. It is dropped (with
   * its memory) when it grew large, or when the run loaded modules its image lacks: the connector's
   * next sandboxes have them ahead.
   */
  giveBack(sandbox: Sandbox, ran: RunInput): void {
    const learned = sandbox.learnedModules;
    if (learned.length > 0) this.modulesLearned.set(ran.cacheKey, [...(this.modulesLearned.get(ran.cacheKey) ?? []), ...learned]);
    if (this.closed || sandbox.instance.memoryBytes > IDLE_MEMORY_BYTES || learned.length > 0) return;
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
    const usable = spare !== null && this.compileFor(spare, input);
    this.refill();
    return usable ? spare : null;
  }

  /**
   * Prepares a sandbox that never ran for the run's connector: the modules of globals its code names
   * (or its runs loaded) are loaded, and the connector is compiled, unless its code is known not to
   * allow it. False when the engine itself failed meanwhile: that sandbox is not to be used (it is dropped).
   */
  private compileFor(sandbox: Sandbox, { cacheKey, code }: RunInput): boolean {
    let ahead: boolean;
    try {
      sandbox.preload([...new Set([...modulesNamedIn(code), ...(this.modulesLearned.get(cacheKey) ?? [])])]);
      if (this.compiledWhenRun.get(cacheKey) === code) return true;
      ahead = sandbox.compileAhead({ cacheKey, code });
    } catch {
      return false;
    }
    if (!ahead) this.compiledWhenRun.set(cacheKey, code);
    return true;
  }

  /**
   * Keeps at most IDLE_SANDBOXES idle, of at most IDLE_SANDBOXES_BYTES together, dropping those of the
   * connectors that ran least recently first.
   */
  private trim(): void {
    let count = 0;
    let bytes = 0;
    for (const entry of this.ready.values()) {
      count += entry.sandboxes.length;
      for (const sandbox of entry.sandboxes) bytes += sandbox.instance.memoryBytes;
    }
    for (const [key, entry] of this.ready) {
      while (entry.sandboxes.length > 0 && (count > IDLE_SANDBOXES || bytes > IDLE_SANDBOXES_BYTES)) {
        bytes -= (entry.sandboxes.shift() as Sandbox).instance.memoryBytes;
        count--;
      }
      if (entry.sandboxes.length === 0) this.ready.delete(key);
      if (count <= IDLE_SANDBOXES && bytes <= IDLE_SANDBOXES_BYTES) return;
    }
  }

  /** Makes spares again once the thread is idle, one at a time; after a failure, only when a spare is taken next. */
  private refill(): void {
    if (this.refilling || this.closed || this.spares.length >= SPARES) return;
    let failed = false;
    this.refilling = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => (this.closed ? null : Sandbox.create(this.env)))
      .then(
        (sandbox) => {
          if (sandbox && !this.closed) this.spares.push(sandbox);
        },
        () => {
          failed = true;
        },
      )
      .finally(() => {
        this.refilling = null;
        if (!failed) this.refill();
      });
  }
}
