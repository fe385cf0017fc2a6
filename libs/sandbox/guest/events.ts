/**
 * `Event`, `CustomEvent`, `EventTarget`, `AbortController`, `AbortSignal` (WHATWG DOM) and
 * `reportError`. Targets have no parents here: an event reaches its target only, capture listeners
 * first. An error a listener throws is "reported" as the standard says: as in Node and Deno, where
 * that is an uncaught exception, it ends the run Failed, like an error in a timer callback.
 * `AbortSignal.timeout` runs on the run's own timers, dropped with the run.
 */
import type { Global } from './internal/global';
import { defineGlobal } from './internal/global';
import type { Internals } from './internal/internals';
import { apply, list, uncurry } from './internal/primordials';
import { defineConstants, defineInterface, dictionary, domString, requireArguments } from './internal/webidl';

interface EventState {
  type: string;
  bubbles: boolean;
  cancelable: boolean;
  composed: boolean;
  timeStamp: number;
  target: object | null;
  currentTarget: object | null;
  phase: number;
  initialized: boolean;
  dispatching: boolean;
  trusted: boolean;
  canceled: boolean;
  inPassiveListener: boolean;
  stopPropagation: boolean;
  stopImmediatePropagation: boolean;
}

interface Listener {
  type: string;
  callback: object;
  capture: boolean;
  once: boolean;
  passive: boolean;
  removed: boolean;
  /** Stops following the `signal` option's signal. */
  unfollow: (() => void) | null;
}

const NONE = 0;
const AT_TARGET = 2;
const setAdd = uncurry(Set.prototype.add);
const setDelete = uncurry(Set.prototype.delete);
const setForEach = uncurry(Set.prototype.forEach);
const NativeSet = Set;
const { defineProperty } = Object;
const { trunc } = Math;
const { isFinite, MAX_SAFE_INTEGER } = Number;
/** Passed by the module when it makes an AbortSignal: `new AbortSignal()` is an "Illegal constructor". */
const MAKE = Symbol('AbortSignal');

type TargetInternals = { listeners: Listener[] };

export default function install(_host: unknown, global: Global, internals: Internals): void {
  const { DOMException, setTimer, now, uncaught, platformClasses } = internals.core;

  let stateOf: (event: Event) => EventState;
  let isEvent: (value: unknown) => boolean;
  let targetOf: (target: EventTarget) => TargetInternals;
  let isEventTarget: (value: unknown) => boolean;

  class Event {
    readonly #state: EventState;

    static {
      stateOf = (event) => event.#state;
      isEvent = (value) => typeof value === 'object' && value !== null && #state in value;
    }

    constructor(type: unknown, eventInitDict: unknown = undefined) {
      requireArguments(arguments.length, 1, 'Event');
      const name = domString(type);
      const init = dictionary(eventInitDict, 'EventInit');
      this.#state = {
        type: name,
        bubbles: !!init?.bubbles,
        cancelable: !!init?.cancelable,
        composed: !!init?.composed,
        timeStamp: now(),
        target: null,
        currentTarget: null,
        phase: NONE,
        initialized: true,
        dispatching: false,
        trusted: false,
        canceled: false,
        inPassiveListener: false,
        stopPropagation: false,
        stopImmediatePropagation: false,
      };
      // [LegacyUnforgeable]: an own property no script can redefine.
      defineProperty(this, 'isTrusted', { get: isTrusted, enumerable: true });
    }

    get type(): string {
      return this.#state.type;
    }

    get target(): object | null {
      return this.#state.target;
    }

    get srcElement(): object | null {
      return this.#state.target;
    }

    get currentTarget(): object | null {
      return this.#state.currentTarget;
    }

    composedPath(): object[] {
      const { currentTarget } = this.#state;
      return currentTarget ? [currentTarget] : [];
    }

    get eventPhase(): number {
      return this.#state.phase;
    }

    stopPropagation(): void {
      this.#state.stopPropagation = true;
    }

    get cancelBubble(): boolean {
      return this.#state.stopPropagation;
    }

    set cancelBubble(value: unknown) {
      if (value) this.#state.stopPropagation = true;
    }

    stopImmediatePropagation(): void {
      this.#state.stopPropagation = true;
      this.#state.stopImmediatePropagation = true;
    }

    get bubbles(): boolean {
      return this.#state.bubbles;
    }

    get cancelable(): boolean {
      return this.#state.cancelable;
    }

    get returnValue(): boolean {
      return !this.#state.canceled;
    }

    set returnValue(value: unknown) {
      if (!value) this.#cancel();
    }

    preventDefault(): void {
      this.#cancel();
    }

    get defaultPrevented(): boolean {
      return this.#state.canceled;
    }

    get composed(): boolean {
      return this.#state.composed;
    }

    get timeStamp(): number {
      return this.#state.timeStamp;
    }

    initEvent(type: unknown, bubbles: unknown = false, cancelable: unknown = false): void {
      requireArguments(arguments.length, 1, 'Event.initEvent');
      const state = this.#state;
      if (state.dispatching) return;
      state.type = domString(type);
      state.bubbles = !!bubbles;
      state.cancelable = !!cancelable;
      state.initialized = true;
      state.trusted = state.canceled = state.stopPropagation = state.stopImmediatePropagation = false;
      state.target = null;
    }

    #cancel(): void {
      if (this.#state.cancelable && !this.#state.inPassiveListener) this.#state.canceled = true;
    }
  }
  defineConstants(Event, { NONE, CAPTURING_PHASE: 1, AT_TARGET, BUBBLING_PHASE: 3 });

  function isTrusted(this: Event): boolean {
    return stateOf(this).trusted;
  }

  class CustomEvent extends Event {
    #detail: unknown;

    constructor(type: unknown, eventInitDict: unknown = undefined) {
      requireArguments(arguments.length, 1, 'CustomEvent');
      super(type, eventInitDict);
      const detail = dictionary(eventInitDict, 'CustomEventInit')?.detail;
      this.#detail = detail === undefined ? null : detail;
    }

    get detail(): unknown {
      return this.#detail;
    }

    initCustomEvent(type: unknown, bubbles: unknown = false, cancelable: unknown = false, detail: unknown = null): void {
      requireArguments(arguments.length, 1, 'CustomEvent.initCustomEvent');
      if (stateOf(this).dispatching) return;
      this.initEvent(type, bubbles, cancelable);
      this.#detail = detail;
    }
  }

  class EventTarget {
    readonly #internals: TargetInternals = { listeners: list() };

    static {
      targetOf = (target) => target.#internals;
      isEventTarget = (value) => typeof value === 'object' && value !== null && #internals in value;
    }

    addEventListener(type: unknown, callback: unknown, options: unknown = undefined): void {
      requireArguments(arguments.length, 2, 'EventTarget.addEventListener');
      const name = domString(type);
      const listener = callbackOf(callback);
      const { capture, once, passive, signal } = listenerOptions(options, true);
      if (!listener || (signal && abortedOf(signal))) return;
      addListener(this, { type: name, callback: listener, capture, once, passive, removed: false, unfollow: null }, signal);
    }

    removeEventListener(type: unknown, callback: unknown, options: unknown = undefined): void {
      requireArguments(arguments.length, 2, 'EventTarget.removeEventListener');
      const name = domString(type);
      const listener = callbackOf(callback);
      const { capture } = listenerOptions(options, false);
      const found = listener && findListener(this, name, listener, capture);
      if (found) removeListener(this, found);
    }

    dispatchEvent(event: unknown): boolean {
      requireArguments(arguments.length, 1, 'EventTarget.dispatchEvent');
      if (!isEvent(event)) throw new TypeError('EventTarget.dispatchEvent: the argument must be an Event.');
      const state = stateOf(event as Event);
      if (state.dispatching || !state.initialized) throw new DOMException('The event is already being dispatched.', 'InvalidStateError');
      state.trusted = false;
      return dispatch(this, event as Event);
    }
  }

  const callbackOf = (callback: unknown): object | null => {
    if (callback === undefined || callback === null) return null;
    if (typeof callback !== 'object' && typeof callback !== 'function') throw new TypeError('EventTarget: the listener must be a function or an object with a handleEvent method.');
    return callback;
  };

  function listenerOptions(options: unknown, adding: boolean): { capture: boolean; once: boolean; passive: boolean; signal: AbortSignal | null } {
    if ((typeof options !== 'object' && typeof options !== 'function') || options === null) {
      return { capture: !!options, once: false, passive: false, signal: null };
    }
    const init = options as Record<string, unknown>;
    const capture = !!init.capture;
    if (!adding) return { capture, once: false, passive: false, signal: null };
    const once = !!init.once;
    const passive = !!init.passive;
    const signal = init.signal;
    if (signal !== undefined && !isAbortSignal(signal)) throw new TypeError('EventTarget.addEventListener: the signal option must be an AbortSignal.');
    return { capture, once, passive, signal: (signal as AbortSignal | undefined) ?? null };
  }

  function findListener(target: EventTarget, type: string, callback: object, capture: boolean): Listener | undefined {
    const { listeners } = targetOf(target);
    for (let i = 0; i < listeners.length; i++) {
      const listener = listeners[i];
      if (listener.type === type && listener.callback === callback && listener.capture === capture) return listener;
    }
    return undefined;
  }

  function addListener(target: EventTarget, listener: Listener, signal: AbortSignal | null): void {
    if (findListener(target, listener.type, listener.callback, listener.capture)) return;
    const { listeners } = targetOf(target);
    listeners[listeners.length] = listener;
    if (signal) listener.unfollow = addAbortAlgorithm(signal, () => removeListener(target, listener));
  }

  function removeListener(target: EventTarget, listener: Listener): void {
    listener.removed = true;
    listener.unfollow?.();
    listener.unfollow = null;
    const internal = targetOf(target);
    const kept = list<Listener>();
    for (let i = 0; i < internal.listeners.length; i++) if (internal.listeners[i] !== listener) kept[kept.length] = internal.listeners[i];
    internal.listeners = kept;
  }

  /** Dispatches `event` to `target`: its capture listeners, then the others. */
  function dispatch(target: EventTarget, event: Event): boolean {
    const state = stateOf(event);
    state.dispatching = true;
    state.target = state.currentTarget = target;
    state.phase = AT_TARGET;
    try {
      invoke(target, event, state, true);
      invoke(target, event, state, false);
    } finally {
      state.dispatching = state.stopPropagation = state.stopImmediatePropagation = false;
      state.currentTarget = null;
      state.phase = NONE;
    }
    return !state.canceled;
  }

  function invoke(target: EventTarget, event: Event, state: EventState, capture: boolean): void {
    if (state.stopPropagation) return;
    // The listeners as they are now: removing one makes a new list, adding one appends to it, and
    // neither changes what this dispatch calls (a removed one is skipped by its flag).
    const listeners = targetOf(target).listeners;
    const count = listeners.length;
    for (let i = 0; i < count; i++) {
      const listener = listeners[i];
      if (listener.removed || listener.type !== state.type || listener.capture !== capture) continue;
      if (listener.once) removeListener(target, listener);
      state.inPassiveListener = listener.passive;
      try {
        const { callback } = listener;
        if (typeof callback === 'function') apply(callback, target, [event]);
        else {
          const handleEvent = (callback as { handleEvent?: unknown }).handleEvent;
          if (typeof handleEvent !== 'function') throw new TypeError("The listener object has no handleEvent method.");
          apply(handleEvent, callback, [event]);
        }
      } catch (error) {
        uncaught(error, `an "${state.type}" event listener`);
      } finally {
        state.inPassiveListener = false;
      }
      if (state.stopImmediatePropagation) return;
    }
  }

  let isAbortSignal: (value: unknown) => boolean;
  let abortedOf: (signal: AbortSignal) => boolean;
  let reasonOf: (signal: AbortSignal) => unknown;
  let signalAbort: (signal: AbortSignal, reason: unknown) => void;
  let addAbortAlgorithm: (signal: AbortSignal, algorithm: () => void) => () => void;
  let dependentSignal: (signals: readonly AbortSignal[]) => AbortSignal;

  class AbortSignal extends EventTarget {
    #aborted = false;
    #reason: unknown = undefined;
    #algorithms: Set<() => void> | null = null;
    /** For a signal made by AbortSignal.any: the signals it follows; for those, the signals that follow them. */
    #dependent = false;
    #sources: Set<AbortSignal> | null = null;
    #dependents: Set<AbortSignal> | null = null;
    #onabort: unknown = null;
    #handler: Listener | null = null;

    constructor(key: unknown = undefined) {
      if (key !== MAKE) throw new TypeError('Illegal constructor: AbortSignal objects come from an AbortController or from AbortSignal.abort, timeout or any.');
      super();
    }

    static {
      isAbortSignal = (value) => typeof value === 'object' && value !== null && #aborted in value;
      abortedOf = (signal) => signal.#aborted;
      reasonOf = (signal) => signal.#reason;
      signalAbort = (signal, reason) => {
        if (signal.#aborted) return;
        signal.#aborted = true;
        signal.#reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
        const followers = list<AbortSignal>();
        if (signal.#dependents) {
          setForEach(signal.#dependents, (dependent: AbortSignal) => {
            if (dependent.#aborted) return;
            dependent.#aborted = true;
            dependent.#reason = signal.#reason;
            followers[followers.length] = dependent;
          });
        }
        runAbortSteps(signal);
        for (let i = 0; i < followers.length; i++) runAbortSteps(followers[i]);
      };
      const runAbortSteps = (signal: AbortSignal) => {
        const algorithms = signal.#algorithms;
        signal.#algorithms = null;
        if (algorithms) setForEach(algorithms, (algorithm: () => void) => algorithm());
        // An aborted signal needs nothing of the signals it followed, nor they of it.
        if (signal.#sources) setForEach(signal.#sources, (source: AbortSignal) => source.#dependents && setDelete(source.#dependents, signal));
        signal.#sources = null;
        signal.#dependents = null;
        const event = new Event('abort');
        stateOf(event).trusted = true;
        dispatch(signal, event);
      };
      addAbortAlgorithm = (signal, algorithm) => {
        if (signal.#aborted) return () => undefined;
        setAdd((signal.#algorithms ??= new NativeSet()), algorithm);
        return () => {
          if (signal.#algorithms) setDelete(signal.#algorithms, algorithm);
        };
      };
      dependentSignal = (signals) => {
        const result = new AbortSignal(MAKE);
        for (let i = 0; i < signals.length; i++) {
          if (signals[i].#aborted) {
            result.#aborted = true;
            result.#reason = signals[i].#reason;
            return result;
          }
        }
        result.#dependent = true;
        const follow = (source: AbortSignal) => {
          setAdd((result.#sources ??= new NativeSet()), source);
          setAdd((source.#dependents ??= new NativeSet()), result);
        };
        for (let i = 0; i < signals.length; i++) {
          const signal = signals[i];
          if (!signal.#dependent) follow(signal);
          else if (signal.#sources) setForEach(signal.#sources, follow);
        }
        return result;
      };
    }

    static abort(reason: unknown = undefined): AbortSignal {
      const signal = new AbortSignal(MAKE);
      signal.#aborted = true;
      signal.#reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
      return signal;
    }

    static timeout(milliseconds: unknown): AbortSignal {
      requireArguments(arguments.length, 1, 'AbortSignal.timeout');
      const delay = trunc(+(milliseconds as number));
      // WebIDL [EnforceRange] unsigned long long.
      if (!isFinite(delay) || delay < 0 || delay > MAX_SAFE_INTEGER) throw new TypeError('AbortSignal.timeout: the delay must be a number of milliseconds from 0 to 2^53 - 1.');
      const signal = new AbortSignal(MAKE);
      setTimer(() => signalAbort(signal, new DOMException('The operation was aborted due to timeout', 'TimeoutError')), delay);
      return signal;
    }

    static any(signals: unknown): AbortSignal {
      requireArguments(arguments.length, 1, 'AbortSignal.any');
      if ((typeof signals !== 'object' && typeof signals !== 'function') || signals === null || typeof (signals as Iterable<unknown>)[Symbol.iterator] !== 'function') {
        throw new TypeError('AbortSignal.any: the argument must be an iterable of AbortSignals.');
      }
      const sources = list<AbortSignal>();
      for (const signal of signals as Iterable<unknown>) {
        if (!isAbortSignal(signal)) throw new TypeError('AbortSignal.any: the argument must be an iterable of AbortSignals.');
        sources[sources.length] = signal as AbortSignal;
      }
      return dependentSignal(sources);
    }

    get aborted(): boolean {
      return this.#aborted;
    }

    get reason(): unknown {
      return this.#reason;
    }

    throwIfAborted(): void {
      if (this.#aborted) throw this.#reason;
    }

    get onabort(): unknown {
      return this.#onabort;
    }

    /** An event handler attribute: its listener is added when it is first set, and keeps its place while it changes. */
    set onabort(value: unknown) {
      const handler = (typeof value === 'object' && value !== null) || typeof value === 'function' ? value : null;
      this.#onabort = handler;
      if (handler === null && this.#handler) {
        removeListener(this, this.#handler);
        this.#handler = null;
      } else if (handler !== null && !this.#handler) {
        this.#handler = { type: 'abort', callback: (event: Event) => this.#callHandler(event), capture: false, once: false, passive: false, removed: false, unfollow: null };
        addListener(this, this.#handler, null);
      }
    }

    #callHandler(event: Event): void {
      const handler = this.#onabort;
      if (typeof handler === 'function' && apply(handler, this, [event]) === false) event.preventDefault();
    }
  }

  class AbortController {
    readonly #signal = new AbortSignal(MAKE);

    static {
      platformClasses.push(
        { name: 'Event', is: isEvent },
        { name: 'AbortSignal', is: (value) => isAbortSignal(value) },
        { name: 'EventTarget', is: isEventTarget },
        { name: 'AbortController', is: (value) => #signal in value },
      );
    }

    get signal(): AbortSignal {
      return this.#signal;
    }

    abort(reason: unknown = undefined): void {
      signalAbort(this.#signal, reason);
    }
  }

  defineInterface(global, 'Event', Event);
  defineInterface(global, 'CustomEvent', CustomEvent);
  defineInterface(global, 'EventTarget', EventTarget);
  defineInterface(global, 'AbortSignal', AbortSignal);
  defineInterface(global, 'AbortController', AbortController);
  defineGlobal(global, 'reportError', function reportError(error: unknown) {
    requireArguments(arguments.length, 1, 'reportError');
    uncaught(error, 'reportError');
  });

  internals.events = {
    isAbortSignal,
    aborted: (signal) => abortedOf(signal as AbortSignal),
    reason: (signal) => reasonOf(signal as AbortSignal),
    dependentSignal: (signals) => dependentSignal(signals as AbortSignal[]),
    addAbortAlgorithm: (signal, algorithm) => addAbortAlgorithm(signal as AbortSignal, algorithm),
    signalAbort: (signal, reason) => signalAbort(signal as AbortSignal, reason),
  };
}
