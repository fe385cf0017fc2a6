/**
 * The globals every connector has from its first line: timers, `queueMicrotask`, `performance`,
 * `self`, `navigator`, and the stubs that load the other modules (URL, fetch, crypto, Intl...) the
 * first time a connector touches one of their names. Runs inside the engine, before any connector
 * code exists; installed once and kept in every sandbox's memory image.
 */
import type { Global, LazyModule } from './internal/global';
import { defineGlobal, resolvePath } from './internal/global';
import type { Internals, PlatformClass } from './internal/internals';

/** The host functions of this module (libs/sandbox/src/host/core.host.ts). */
interface CoreHost {
  /** Starts timer `id`: the host calls `fire(id)` once `delayMs` passed (and every `delayMs` after, when repeating). */
  schedule(id: number, delayMs: number, repeat: boolean): void;
  cancel(id: number): void;
  /** Milliseconds since the run started, with sub-millisecond precision. */
  now(): number;
  /** When the run started, in milliseconds since the epoch. */
  timeOrigin(): number;
  /** Loads a module (its globals replace the stubs); throws when it cannot be loaded. */
  load(module: string): void;
  /** Ends the run with an error nothing caught (a failing queueMicrotask callback); throws. */
  uncaught(error: unknown, where: string): never;
}

interface Timer {
  callback: (...args: unknown[]) => unknown;
  args: unknown[];
  repeat: boolean;
}

/**
 * What the host keeps of this module: how to run a timer's callback, how to make the errors host
 * functions throw, and what the other modules share (handed to each module's install).
 */
export interface CoreExports {
  fire(id: number): void;
  makeError(kind: string, message: string, name: string): Error;
  internals: Internals;
}

/** The legacy numeric codes of DOMException names. */
const DOM_EXCEPTION_CODES: Record<string, number> = {
  IndexSizeError: 1,
  HierarchyRequestError: 3,
  WrongDocumentError: 4,
  InvalidCharacterError: 5,
  NoModificationAllowedError: 7,
  NotFoundError: 8,
  NotSupportedError: 9,
  InvalidStateError: 11,
  SyntaxError: 12,
  InvalidModificationError: 13,
  NamespaceError: 14,
  InvalidAccessError: 15,
  TypeMismatchError: 17,
  SecurityError: 18,
  NetworkError: 19,
  AbortError: 20,
  URLMismatchError: 21,
  QuotaExceededError: 22,
  TimeoutError: 23,
  InvalidNodeTypeError: 24,
  DataCloneError: 25,
};

let isDOMException: (value: object) => boolean;

class DOMException extends Error {
  readonly #name: string;

  static {
    isDOMException = (value) => #name in value;
  }

  constructor(message: unknown = '', name: unknown = 'Error') {
    super(`${message as string}`);
    this.#name = `${name as string}`;
  }

  override get name(): string {
    return this.#name;
  }

  get code(): number {
    return DOM_EXCEPTION_CODES[this.#name] ?? 0;
  }
}

Object.defineProperty(DOMException.prototype, Symbol.toStringTag, { value: 'DOMException', configurable: true });

/** DOMException is serializable: structuredClone copies its name and message. */
const DOM_EXCEPTION_CLASS: PlatformClass = {
  name: 'DOMException',
  is: (value) => isDOMException(value),
  clone: (value) => new DOMException((value as DOMException).message, (value as DOMException).name),
};

/** Timers above this many milliseconds fire at once in browsers (32-bit overflow); here they wait that long. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export default function install(host: CoreHost, global: Global, lazy: LazyModule[]): CoreExports {
  const timers = new Map<number, Timer>();
  // Connector timers count up from 1; the modules' own count down from -1, out of clearTimeout's reach.
  let nextId = 1;
  let nextInternalId = -1;
  const { resolve } = Promise;
  const then = Promise.prototype.then;

  const delayOf = (value: unknown) => {
    const delay = Number(value);
    return Number.isFinite(delay) ? Math.min(Math.max(0, Math.trunc(delay)), MAX_DELAY_MS) : 0;
  };
  const start = (name: string, repeat: boolean, callback: unknown, delay: unknown, args: unknown[], id = nextId++) => {
    if (typeof callback !== 'function') throw new TypeError(`${name} expects a function (code strings are not run).`);
    timers.set(id, { callback: callback as Timer['callback'], args, repeat });
    try {
      host.schedule(id, delayOf(delay), repeat);
    } catch (error) {
      timers.delete(id);
      throw error;
    }
    return id;
  };
  const clear = (id: number) => {
    if (timers.delete(id)) host.cancel(id);
  };
  const clearPublic = (id: unknown) => {
    const key = Number(id);
    if (key > 0) clear(key);
  };

  defineGlobal(global, 'setTimeout', function setTimeout(callback: unknown, delay?: unknown, ...args: unknown[]) {
    return start('setTimeout', false, callback, delay, args);
  });
  defineGlobal(global, 'setInterval', function setInterval(callback: unknown, delay?: unknown, ...args: unknown[]) {
    return start('setInterval', true, callback, delay, args);
  });
  defineGlobal(global, 'clearTimeout', function clearTimeout(id?: unknown) {
    clearPublic(id);
  });
  defineGlobal(global, 'clearInterval', function clearInterval(id?: unknown) {
    clearPublic(id);
  });
  defineGlobal(global, 'queueMicrotask', function queueMicrotask(callback: unknown) {
    if (typeof callback !== 'function') throw new TypeError('queueMicrotask expects a function.');
    then.call(resolve.call(Promise, undefined), () => {
      try {
        callback();
      } catch (error) {
        host.uncaught(error, 'a queueMicrotask callback');
      }
    });
  });

  const performance = Object.create(null) as Record<string, unknown>;
  defineGlobal(performance, 'now', function now() {
    return host.now();
  });
  Object.defineProperty(performance, 'timeOrigin', { get: () => host.timeOrigin(), enumerable: true });
  defineGlobal(global, 'performance', Object.freeze(performance));
  defineGlobal(global, 'navigator', Object.freeze({ userAgent: 'GenericIntegration-Connector' }));
  defineGlobal(global, 'self', global);
  defineGlobal(global, 'DOMException', DOMException);
  const constructors: Record<string, ErrorConstructor> = { TypeError, RangeError, SyntaxError };

  const contextMembers: Record<string, unknown> = Object.create(null);
  for (const module of lazy) installStubs(host, global, module, contextMembers);

  const internals: Internals = {
    context: contextMembers,
    core: {
      DOMException,
      setTimer: (callback, delayMs) => start('setTimeout', false, callback, delayMs, [], nextInternalId--),
      clearTimer: clear,
      now: () => host.now(),
      uncaught: (error, where) => host.uncaught(error, where),
      platformClasses: [DOM_EXCEPTION_CLASS],
    },
  };

  return {
    internals,
    fire(id: number) {
      const timer = timers.get(id);
      if (!timer) return;
      if (!timer.repeat) timers.delete(id);
      timer.callback(...timer.args);
    },
    makeError(kind: string, message: string, name: string) {
      return kind === 'DOMException' ? new DOMException(message, name) : new (constructors[kind] ?? Error)(message);
    },
  };
}

/**
 * Each global of a module is an accessor until first used: reading it loads the module, whose install
 * replaces the accessor with the real value; assigning it first simply defines the value. A member of
 * `Context` a module gives is an accessor for good: it loads the module if need be, and reads the member. Each method
 * the module replaces on a built-in prototype (`Date.prototype.toLocaleString`) is a stub that loads
 * the module and calls the replacement, however it is reached (`call`, `apply`, a saved reference).
 * What a connector put in place of a stub or an accessor before the module loaded stays in place.
 */
function installStubs(host: CoreHost, global: Global, module: LazyModule, contextMembers: Record<string, unknown>): void {
  const { apply } = Reflect;
  const { defineProperty, getOwnPropertyDescriptor } = Object;
  const methods = module.methods.map(([path, name]) => ({ path, name, target: resolvePath(global, path), stub: undefined as unknown, real: undefined as unknown }));
  const accessors: Record<string, unknown> = {};
  let loaded = false;
  const load = () => {
    if (loaded) return;
    const before = methods.map(({ target, name }) => getOwnPropertyDescriptor(target, name));
    const globalsBefore = module.globals.map((name) => getOwnPropertyDescriptor(global, name));
    host.load(module.name);
    loaded = true;
    methods.forEach((method, i) => {
      method.real = method.target[method.name];
      const was = before[i];
      if (was && was.value !== method.stub) defineProperty(method.target, method.name, was);
    });
    module.globals.forEach((name, i) => {
      const was = globalsBefore[i];
      if (was && was.get !== accessors[name]) defineProperty(global, name, was);
    });
  };
  for (const name of module.globals) {
    const get = () => {
      load();
      return global[name];
    };
    accessors[name] = get;
    defineProperty(global, name, {
      configurable: true,
      enumerable: false,
      get,
      set(value: unknown) {
        defineProperty(global, name, { value, writable: true, configurable: true, enumerable: false });
      },
    });
  }
  // Members of Context stay accessors (Context is frozen once the modules are installed): each reads the member the module gave.
  for (const name of module.contextMembers) {
    defineProperty(global.Context as object, name, {
      configurable: false,
      enumerable: true,
      get() {
        if (!(name in contextMembers)) load();
        return contextMembers[name];
      },
    });
  }
  for (const method of methods) {
    const { name, path } = method;
    method.stub = {
      [name](this: unknown, ...args: unknown[]) {
        load();
        if (typeof method.real !== 'function' || method.real === method.stub) throw new TypeError(`${path}.${name} is not available.`);
        return apply(method.real, this, args);
      },
    }[name];
    defineProperty(method.target, name, { value: method.stub, writable: true, configurable: true, enumerable: false });
  }
}
