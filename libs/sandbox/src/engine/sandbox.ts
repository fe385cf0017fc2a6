import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, VmCallResult } from 'quickjs-emscripten';
import { connectorFunctionSource, CONNECTOR_FILENAME, wrapConnector } from '../compile/connector-source';
import { ContextApi } from '../context/context-api';
import { EngineInstance, ENGINE_OWN_BYTES } from './engine-instance';
import { heapEnd, MemoryImage } from './memory-image';
import { RandomState } from './random-state';
import { COMPILE_STACK_BYTES, type SandboxEnvironment } from '../sandbox-options';

/** A connector's code and what identifies it: an integration version. */
export interface ConnectorCode {
  cacheKey: string;
  code: string;
}

/** Outside a run, anything that runs is stopped at its first check. */
const STOP = () => true;
/** While the sandbox itself calls into the engine. */
const GO_ON = () => false;

/**
 * A QuickJS runtime and context in an engine instance of its own, with the Context API installed
 * and, once compiled ahead for a connector, that connector's function. When it is ready its memory
 * image is taken, and after every run the image is put back: each run starts from that very state,
 * as in a sandbox nobody used before, for the price of a copy of the image instead of a new context.
 * Nothing of a run survives it, and a sandbox only ever serves runs of one connector.
 */
export class Sandbox {
  readonly runtime: QuickJSRuntime;
  readonly context: QuickJSContext;
  readonly api: ContextApi;
  /** Whether the interrupt handler stops the code now; each run sets its own. */
  interrupt: () => boolean = GO_ON;
  private compiled: (ConnectorCode & { fn: QuickJSHandle }) | null = null;
  private image: MemoryImage;
  private readonly random: RandomState;
  private ran = false;
  /** Whether the run going on must end and has been left no stack or memory (see `starve`). */
  private starved = false;

  private constructor(
    readonly instance: EngineInstance,
    private readonly env: SandboxEnvironment,
  ) {
    instance.capMemory(env.defaults.memoryBytes + ENGINE_OWN_BYTES);
    this.runtime = instance.module.newRuntime();
    this.runtime.setMemoryLimit(env.defaults.memoryBytes);
    this.runtime.setMaxStackSize(env.maxStackBytes);
    this.runtime.setInterruptHandler(() => this.interrupt());
    this.context = this.runtime.newContext();
    // quickjs-emscripten makes these handles on first use and keeps them: made now, they are part of
    // the image. (The sandbox never uses the other handles it makes lazily: BigInt and symbol helpers.)
    void [this.context.global, this.context.undefined, this.context.null, this.context.true, this.context.false];
    this.api = new ContextApi(this.context, env);
    const { memory, layout } = instance;
    this.random = RandomState.locate(memory, { start: layout.stackTop, end: heapEnd(memory, layout) }, () => this.drawRandom());
    this.interrupt = STOP;
    this.image = this.capture();
  }

  /** A sandbox in a new engine instance, for any connector (it compiles the code it runs). */
  static async create(env: SandboxEnvironment): Promise<Sandbox> {
    return new Sandbox(await EngineInstance.create(), env);
  }

  /** The connector compiled into the image; null when the sandbox compiles the code it runs. */
  get connector(): (ConnectorCode & { fn: QuickJSHandle }) | null {
    return this.compiled;
  }

  /**
   * Compiles `connector` into a sandbox that never ran, and takes the image again with it. For
   * well-formed code this runs nothing: evaluating the wrapped code only creates the connector
   * function. Code that closes its function body early would run statements here, outside any run;
   * anything that runs is interrupted at its first check and finds the Context API unbound, and the
   * sandbox goes back to its image. False then: the code is compiled when it runs.
   */
  compileAhead(connector: ConnectorCode): boolean {
    if (this.ran || this.compiled) throw new Error('Only a sandbox that never ran can compile a connector ahead.');
    const result = this.evalConnector(connector.code);
    if (!result.error && this.api.values.sourceOf(result.value) === connectorFunctionSource(connector.code)) {
      this.compiled = { ...connector, fn: result.value };
      this.image = this.capture();
      return true;
    }
    this.restore();
    return false;
  }

  /**
   * Loads modules of connector globals (URL, fetch, crypto...) into a sandbox that never ran, and
   * takes the image again with them: the runs of a connector that uses them find them ready.
   */
  preload(modules: readonly string[]): void {
    if (this.ran || this.compiled) throw new Error('Only a sandbox that never ran can load modules ahead.');
    if (modules.length === 0) return;
    this.interrupt = GO_ON; // the modules' own code, not a connector's
    try {
      this.api.globals.preload(modules);
    } finally {
      this.interrupt = STOP;
    }
    this.image = this.capture();
  }

  /** Modules the last run loaded that the image lacks; read before the sandbox is reset. */
  get learnedModules(): readonly string[] {
    return [...this.api.globals.learnedModules];
  }

  /**
   * Evaluates a connector's wrapped code (creating its function) on the stack budget of compiling:
   * code nested too deeply is refused by QuickJS ("stack overflow") before it exhausts the thread's
   * native stack. Code that closes its function body early runs on that budget too.
   */
  evalConnector(code: string): VmCallResult<QuickJSHandle> {
    this.runtime.setMaxStackSize(COMPILE_STACK_BYTES);
    try {
      return this.context.evalCode(wrapConnector(code), CONNECTOR_FILENAME);
    } finally {
      this.runtime.setMaxStackSize(this.env.maxStackBytes);
    }
  }

  /**
   * Starts a run with its memory limit (QuickJS's own count of its objects, and a cap on the
   * instance's memory for what that count misses) and a fresh seed for Math.random: whatever state
   * the image holds (the one the generator was found with, for a sandbox's first run), every run
   * draws numbers of its own. From now on the sandbox holds the run's state until it is reset.
   */
  begin(memoryBytes: number): void {
    this.ran = true;
    this.instance.capMemory(memoryBytes + ENGINE_OWN_BYTES);
    this.runtime.setMemoryLimit(memoryBytes);
    this.random.reseed();
  }

  /**
   * Leaves the running code no stack and no memory: every call it makes, and every object it would
   * create, fails at once. The interrupt that ends a run cannot be caught, but QuickJS turns one
   * thrown inside an async function into a rejected promise, and code calling async functions in a
   * loop that ignores them would run on; starved, those calls fail before their bodies run, so the
   * loop's own steps meet the interrupt, where nothing can catch it. The memory image puts both
   * budgets back.
   */
  starve(): void {
    if (this.starved) return;
    this.starved = true;
    this.runtime.setMaxStackSize(1);
    this.runtime.setMemoryLimit(1);
  }

  /**
   * Puts the image back after a run. The run's handles on the host side point into memory that no
   * longer holds them: they are dropped, never freed.
   */
  reset(): void {
    this.starved = false;
    this.api.reset();
    this.interrupt = STOP;
    this.restore();
  }

  private capture(): MemoryImage {
    this.api.globals.capture();
    return MemoryImage.capture(this.instance.memory, this.instance.layout);
  }

  private restore(): void {
    this.image.restore(this.instance.memory);
    this.api.globals.restore();
  }

  /** The context's Math.random(). */
  private drawRandom(): number {
    const drawn = this.context.unwrapResult(this.context.evalCode('Math.random()'));
    const value = this.context.getNumber(drawn);
    drawn.dispose();
    return value;
  }
}
