/**
 * Built-in methods and accessors captured when a module is installed, called as functions: a
 * connector that replaces `Map.prototype.set` or a getter changes what its own code sees, not what
 * the globals use.
 */
const { call } = Function.prototype;

/** `fn` as a function of its `this` and arguments. */
export const uncurry = <T extends (...args: never[]) => unknown>(fn: T) => call.bind(fn) as unknown as (self: unknown, ...args: Parameters<T>) => ReturnType<T>;

/** The getter of `target[key]` as a function of its `this`. */
export const getter = (target: object, key: PropertyKey) => uncurry((Object.getOwnPropertyDescriptor(target, key) as PropertyDescriptor).get as () => unknown);

/** `Reflect.apply`, as it was. */
export const { apply } = Reflect;

const { setPrototypeOf } = Object;
/** An empty array without a prototype: storing an element never meets a setter a connector put on Array.prototype. */
export const list = <T>(): T[] => setPrototypeOf([], null) as T[];
