/** The sandbox's global object, as the modules see it. */
export type Global = typeof globalThis & Record<string, unknown>;

/** A module loaded on first use: the globals it defines and the built-in methods it replaces. */
export interface LazyModule {
  name: string;
  globals: string[];
  /** `[path of the object, method name]`, e.g. `['Date.prototype', 'toLocaleString']`. */
  methods: Array<[string, string]>;
  /** Members of `Context` it gives (`Step`...), put in `Internals.context` by its install. */
  contextMembers: string[];
}

/** Defines a global (or a property of a namespace object) the way the built-ins are: writable, configurable, not enumerable. */
export function defineGlobal(target: object, name: string, value: unknown): void {
  Object.defineProperty(target, name, { value, writable: true, configurable: true, enumerable: false });
}

/** The object at a dotted path from the global object, e.g. `Date.prototype`. */
export function resolvePath(global: Global, path: string): Record<string, unknown> {
  let target: unknown = global;
  for (const part of path.split('.')) target = (target as Record<string, unknown>)[part];
  if (target === null || (typeof target !== 'object' && typeof target !== 'function')) throw new TypeError(`${path} does not exist.`);
  return target as Record<string, unknown>;
}

/** WebIDL `USVString`: the value as a string (symbols throw), lone surrogates replaced by U+FFFD. */
export function usvString(value: unknown): string {
  const text = `${value as string}`;
  return text.isWellFormed() ? text : text.toWellFormed();
}
