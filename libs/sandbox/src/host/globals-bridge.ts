import type { QuickJSContext, QuickJSHandle, VmCallResult } from 'quickjs-emscripten';
import { RunLimitExceeded, SandboxError, type GlobalsModule, type HostRun } from './host-module';
import { coreModule } from './core.host';
import { GLOBALS_MODULES, lazyModules, withRequirements } from './globals-library';
import { GLOBALS_SOURCES } from './sources.generated';

type HostResult = QuickJSHandle | VmCallResult<QuickJSHandle> | void;
/** `String.prototype.isWellFormed` (Node 20 has it; the ES2023 typings do not). */
const isWellFormed = (text: string) => (text as string & { isWellFormed(): boolean }).isWellFormed();

/** What the bridge needs of the Context API: the bound run, and the engine helpers captured before any connector code. */
export interface BridgeHooks {
  /** The run a host function serves, or the error it throws when no run is bound or the run must end. */
  bound(): { run: HostRun } | { error: QuickJSHandle };
  /** A sandbox promise settled by host work (made in the sandbox once it ends); counts as a call in flight of the run (against `pendingCalls` when `metered`). */
  promise(run: HostRun, work: Promise<() => VmCallResult<QuickJSHandle>>, metered: boolean): HostResult;
  /** Ends the run with a failure: an error no connector code caught. */
  uncaught(run: HostRun, error: QuickJSHandle, where: string): { error: QuickJSHandle };
  /** Ends the run with a limit verdict. */
  exceeded(run: HostRun, message: string): { error: QuickJSHandle };
  parseJson(text: string): VmCallResult<QuickJSHandle>;
  /** The JSON text of a sandbox value, or undefined when it has none. */
  json(value: QuickJSHandle): string | undefined;
  /** `Object.prototype.toString.call(value)`. */
  tag(value: QuickJSHandle): string | null;
}

/**
 * Installs the connector globals into a sandbox: the core module at once, the others on first use
 * (or ahead, into a memory image, when a connector's code names them). Each module's sandbox side is
 * a compiled source (sources.generated.ts) whose install function receives the module's host
 * functions; values cross as JSON, and bytes as ArrayBuffers.
 */
export class GlobalsBridge {
  private readonly fire: QuickJSHandle;
  private readonly makeError: QuickJSHandle;
  /** `ArrayBuffer.prototype.byteLength`'s getter, taken before any connector code exists. */
  private readonly arrayBufferLength: QuickJSHandle;
  /** What the modules share, out of the connector's reach (guest/internal/internals.ts): every module's install gets it. */
  private readonly internals: QuickJSHandle;
  /** The key "length", made once: reading a string's length makes no key string each time. */
  private readonly lengthKey: QuickJSHandle;
  /**
   * The object of host functions each loaded module got, held: the engine then never frees those
   * functions. Freeing one (a connector that replaced every global keeping it reachable) makes
   * quickjs-emscripten forget it, and the next run, from the memory image, would still call it.
   * Those of modules loaded during a run are dropped with the run, as all its handles are.
   */
  private readonly hostObjects: QuickJSHandle[] = [];
  private capturedHostObjects = 0;
  /** Modules in the context now; what the memory image holds is restored with it (see `capture`). */
  private loaded = new Set<string>(['core']);
  private captured = new Set<string>(['core']);
  /** Modules loaded by the run going on, beyond those of the image. */
  private learned = new Set<string>();

  constructor(
    private readonly ctx: QuickJSContext,
    private readonly hooks: BridgeHooks,
  ) {
    const lazy = ctx.unwrapResult(hooks.parseJson(JSON.stringify(lazyModules())));
    const exports = this.install(coreModule, lazy, {
      load: (name) => this.loadDuringRun(name),
      uncaught: (error, where) => this.uncaught(error, where),
    });
    lazy.dispose();
    this.fire = ctx.getProp(exports, 'fire');
    this.makeError = ctx.getProp(exports, 'makeError');
    this.arrayBufferLength = ctx.unwrapResult(ctx.evalCode("Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get"));
    this.internals = ctx.getProp(exports, 'internals');
    exports.dispose();
    this.lengthKey = ctx.newString('length');
  }

  /** Loads modules (and what they require) into the context, outside any run: for a memory image. */
  preload(names: Iterable<string>): void {
    for (const name of withRequirements(names)) this.loadModule(name);
  }

  /** The modules in the context become those of the memory image just taken. */
  capture(): void {
    this.captured = new Set(this.loaded);
    this.capturedHostObjects = this.hostObjects.length;
  }

  /** After the image is put back: only its modules are loaded again. */
  restore(): void {
    this.loaded = new Set(this.captured);
    this.learned.clear();
    this.hostObjects.length = this.capturedHostObjects;
  }

  /** Modules the last run loaded that its sandbox's image lacked: worth loading ahead next time. */
  get learnedModules(): ReadonlySet<string> {
    return this.learned;
  }

  /** Runs the callback of timer `id`: the error it threw, if any. */
  fireTimer(id: number): QuickJSHandle | null {
    const result = this.ctx.callFunction(this.fire, this.ctx.undefined, this.ctx.newNumber(id));
    if (result.error) return result.error;
    result.value.dispose();
    return null;
  }

  /** `load(name)` of the core module: a global of a module not in the image was touched. */
  private loadDuringRun(name: QuickJSHandle | undefined): HostResult {
    const bound = this.hooks.bound();
    if ('error' in bound) return bound;
    const module = name && this.ctx.typeof(name) === 'string' ? this.ctx.getString(name) : '';
    if (!GLOBALS_MODULES.has(module)) return { error: this.newError(new SandboxError('TypeError', 'No such module.')) };
    for (const needed of withRequirements([module])) {
      if (this.loaded.has(needed)) continue;
      this.loadModule(needed);
      this.learned.add(needed);
    }
  }

  /** `uncaught(error, where)` of the core module: an error no connector code caught ends the run. */
  private uncaught(error: QuickJSHandle | undefined, where: QuickJSHandle | undefined): HostResult {
    const bound = this.hooks.bound();
    if ('error' in bound) return bound;
    const place = where && this.ctx.typeof(where) === 'string' ? this.ctx.getString(where) : 'a callback';
    return this.hooks.uncaught(bound.run, error ?? this.ctx.undefined, place);
  }

  private loadModule(name: string): void {
    if (this.loaded.has(name)) return;
    const module = GLOBALS_MODULES.get(name);
    if (!module) throw new Error(`No connector globals module '${name}'.`);
    this.install(module, this.internals).dispose();
    this.loaded.add(name);
  }

  /**
   * Evaluates a module's source and calls its install function with its host functions, the global
   * object and `extra` (the core module's list of lazy modules, the others' internals); returns what
   * install returned. `raw` host functions take and give handles (the core module's, which reach
   * into the engine).
   */
  private install(module: GlobalsModule, extra: QuickJSHandle, raw: Record<string, (...handles: QuickJSHandle[]) => HostResult> = {}): QuickJSHandle {
    const ctx = this.ctx;
    const source = GLOBALS_SOURCES[module.name];
    if (source === undefined) throw new Error(`The connector globals module '${module.name}' has no compiled source; run npm run build.`);
    const install = ctx.unwrapResult(ctx.evalCode(source, `${module.name}.js`));
    const host = ctx.newObject();
    const functions: Record<string, (...handles: QuickJSHandle[]) => HostResult> = { ...raw };
    for (const [name, fn] of Object.entries(module.functions)) {
      const metered = !module.unmetered?.includes(name);
      functions[name] = (...handles) => this.call(module.name, name, fn, handles, metered);
    }
    for (const [name, fn] of Object.entries(functions)) {
      const handle = ctx.newFunction(name, fn);
      ctx.setProp(host, name, handle);
      handle.dispose();
    }
    const result = ctx.callFunction(install, ctx.undefined, host, ctx.global, extra);
    install.dispose();
    this.hostObjects.push(host);
    return ctx.unwrapResult(result);
  }

  /** One call of a host function: its arguments read, its result (or promise, or error) made in the sandbox. */
  private call(module: string, name: string, fn: GlobalsModule['functions'][string], handles: QuickJSHandle[], metered: boolean): HostResult {
    const bound = this.hooks.bound();
    if ('error' in bound) return bound;
    const { run } = bound;
    let result: unknown;
    try {
      result = fn(run, ...handles.map((handle) => this.toHost(handle)));
    } catch (error) {
      return this.fail(run, error, module, name);
    }
    if (result instanceof Promise) {
      const settled = result.then(
        (value: unknown) => () => this.toSandbox(value),
        (error: unknown) => () => ({ error: this.errorFor(run, error, module, name) }),
      );
      return this.hooks.promise(run, settled, metered);
    }
    const made = this.toSandbox(result);
    return made.error ? made : made.value;
  }

  /** A host function's error as the sandbox sees it. */
  private fail(run: HostRun, error: unknown, module: string, name: string): HostResult {
    return { error: this.errorFor(run, error, module, name) };
  }

  private errorFor(run: HostRun, error: unknown, module: string, name: string): QuickJSHandle {
    if (error instanceof RunLimitExceeded) return this.hooks.exceeded(run, error.message).error;
    if (error instanceof SandboxError) return this.newError(error);
    return this.newError(new SandboxError('TypeError', `${module}.${name} failed unexpectedly.`));
  }

  /** A sandbox error object of the SandboxError's kind. */
  newError(error: SandboxError): QuickJSHandle {
    const ctx = this.ctx;
    const args = [error.kind, error.message, error.exceptionName].map((text) => ctx.newString(text));
    const made = ctx.callFunction(this.makeError, ctx.undefined, ...args);
    for (const arg of args) arg.dispose();
    return made.error ?? made.value;
  }

  /** A sandbox value as host data: primitives as they are, ArrayBuffers as bytes, objects through JSON. */
  private toHost(handle: QuickJSHandle): unknown {
    const ctx = this.ctx;
    switch (ctx.typeof(handle)) {
      case 'undefined':
        return undefined;
      case 'string':
        return this.readString(handle);
      case 'number':
        return ctx.getNumber(handle);
      case 'boolean':
        return ctx.sameValue(handle, ctx.true);
      case 'object': {
        const tag = this.hooks.tag(handle);
        if (tag === '[object Null]') return null;
        if (tag === '[object ArrayBuffer]' && this.isArrayBuffer(handle)) {
          const view = ctx.getArrayBuffer(handle);
          const bytes = new Uint8Array(view.value);
          view.dispose();
          return bytes;
        }
        const json = this.hooks.json(handle);
        return json === undefined ? undefined : JSON.parse(json);
      }
      default:
        return undefined; // functions, symbols and bigints carry nothing a host function reads
    }
  }

  /** Whether a value is a real ArrayBuffer (a connector can give any object its tag): the built-in byteLength getter accepts nothing else. */
  private isArrayBuffer(handle: QuickJSHandle): boolean {
    const result = this.ctx.callFunction(this.arrayBufferLength, handle);
    (result.error ?? result.value).dispose();
    return !result.error;
  }

  /**
   * A sandbox string, exactly. quickjs-emscripten hands strings over as C strings, which end at the
   * first U+0000, and lone surrogates become U+FFFD on the way. Either shows as a different length
   * or a U+FFFD: then the string travels as JSON text, slower (QuickJS quotes about 100 characters
   * a microsecond) but exact.
   */
  private readString(handle: QuickJSHandle): string {
    const ctx = this.ctx;
    const text = ctx.getString(handle);
    const length = ctx.getProp(handle, this.lengthKey);
    const units = ctx.getNumber(length);
    length.dispose();
    if (text.length === units && !text.includes('\uFFFD')) return text;
    const json = this.hooks.json(handle);
    return json === undefined ? '' : (JSON.parse(json) as string);
  }

  /** Host data as a sandbox value. */
  private toSandbox(value: unknown): VmCallResult<QuickJSHandle> {
    const ctx = this.ctx;
    if (value === undefined) return { value: ctx.undefined };
    if (value === null) return { value: ctx.null };
    if (typeof value === 'boolean') return { value: value ? ctx.true : ctx.false };
    if (typeof value === 'number') return { value: ctx.newNumber(value) };
    // Text with U+0000 (a C string ends there) or a lone surrogate goes as JSON; any other as it is, the quicker way.
    if (typeof value === 'string') return value.includes('\0') || !isWellFormed(value) ? this.hooks.parseJson(JSON.stringify(value)) : { value: ctx.newString(value) };
    if (value instanceof Uint8Array) {
      const own = value.byteOffset === 0 && value.byteLength === value.buffer.byteLength && value.buffer instanceof ArrayBuffer;
      return { value: ctx.newArrayBuffer(own ? (value.buffer as ArrayBuffer) : value.slice().buffer) };
    }
    if (value instanceof SandboxError) return { error: this.newError(value) };
    return this.hooks.parseJson(JSON.stringify(value));
  }
}
