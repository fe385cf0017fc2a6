/**
 * What the modules of globals share with each other, out of the connector's reach: the core module
 * makes this object before any connector code exists, every module's install receives it as its
 * third argument, and a module that others build on adds its own entry (`internals.events`). The
 * originals live here, so a connector that replaces `globalThis.setTimeout` or `DOMException`
 * changes what it calls itself, never what the modules use.
 */
export interface Internals {
  core: CoreInternals;
  events?: EventsInternals;
  /** The members of `Context` that modules give (`Step`, `Sleep`...), by name: `Context`'s accessors read them here, loading their module first. */
  context: Record<string, unknown>;
}

export type DOMExceptionConstructor = new (message?: string, name?: string) => Error & { readonly code: number };

/**
 * A class of platform objects (URL, AbortSignal, Blob...) as `structuredClone` sees it: each module
 * registers its classes in `platformClasses`. Serializable ones (DOMException, Blob, File, CryptoKey)
 * give `clone`; for the others structuredClone throws a DataCloneError, as in browsers.
 */
export interface PlatformClass {
  /** The interface name, for error messages. */
  name: string;
  /** A brand check (a private field), not the prototype chain: true only for objects the class made. */
  is(value: object): boolean;
  /** A new object with the same data: only for serializable classes. */
  clone?(value: object): object;
}

export interface CoreInternals {
  DOMException: DOMExceptionConstructor;
  /** A timer of the run no connector code can clear (AbortSignal.timeout); its callback's error ends the run. */
  setTimer(callback: () => void, delayMs: number): number;
  clearTimer(id: number): void;
  /** Milliseconds since the run started (performance.now()). */
  now(): number;
  /** Ends the run Failed with an error no connector code can catch ("report the exception"); throws. */
  uncaught(error: unknown, where: string): never;
  platformClasses: PlatformClass[];
}

/** The abort machinery, for modules whose operations take an AbortSignal (fetch). */
export interface EventsInternals {
  isAbortSignal(value: unknown): boolean;
  aborted(signal: object): boolean;
  reason(signal: object): unknown;
  /** A signal that aborts when any of `signals` does (AbortSignal.any). */
  dependentSignal(signals: readonly object[]): object;
  /** Runs `algorithm` when `signal` aborts, before its abort event; returns a function that removes it. */
  addAbortAlgorithm(signal: object, algorithm: () => void): () => void;
  /** Aborts `signal` (an AbortError DOMException when `reason` is undefined). */
  signalAbort(signal: object, reason: unknown): void;
}
