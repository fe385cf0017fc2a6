/**
 * `structuredClone(value, { transfer })`: the HTML structured clone algorithm (serialize, then
 * deserialize) in one walk, for what exists in a connector: primitives, wrappers, Date, RegExp,
 * Map, Set, ArrayBuffer, typed arrays, DataView, errors, arrays and plain objects, with cycles and
 * shared references kept. The walk keeps its own stack, so any depth fits in the run's memory.
 * Platform objects (DOMException, URL, AbortSignal...) are cloned or refused by the class that made
 * them (`internals.core.platformClasses`).
 */
import type { Global } from './internal/global';
import { defineGlobal } from './internal/global';
import type { Internals, PlatformClass } from './internal/internals';
import { arrayBufferLength, dataViewBuffer, dataViewLength, dataViewOffset, isDetached, isView, setBytes, typedArrayBuffer, typedArrayElements, typedArrayName, typedArrayOffset } from './internal/bytes';
import { getter, list, uncurry } from './internal/primordials';
import { dictionary, requireArguments } from './internal/webidl';

const { assign, create, defineProperty, getOwnPropertyDescriptor, getPrototypeOf, hasOwn, keys } = Object;
const { isArray } = Array;
const { min } = Math;
/** A table without a prototype: nothing a connector adds to Object.prototype is found in it. */
const table = <T>(entries: Record<string, T>): Record<string, T> => assign(create(null) as Record<string, T>, entries);
const objectTag = uncurry(Object.prototype.toString);
const isError = (Error as { isError?: (value: unknown) => boolean }).isError;
const dateValue = uncurry(Date.prototype.getTime);
const regExpSource = getter(RegExp.prototype, 'source') as (value: unknown) => string;
/** Each flag's getter with its letter, in the order of RegExp.prototype.flags. */
const REGEXP_FLAGS = (
  [
    ['hasIndices', 'd'],
    ['global', 'g'],
    ['ignoreCase', 'i'],
    ['multiline', 'm'],
    ['dotAll', 's'],
    ['unicode', 'u'],
    ['unicodeSets', 'v'],
    ['sticky', 'y'],
  ] as const
)
  .filter(([name]) => getOwnPropertyDescriptor(RegExp.prototype, name))
  .map(([name, letter]) => ({ flag: getter(RegExp.prototype, name), letter }));
const booleanValue = uncurry(Boolean.prototype.valueOf);
const numberValue = uncurry(Number.prototype.valueOf);
const stringValue = uncurry(String.prototype.valueOf);
const bigintValue = uncurry(BigInt.prototype.valueOf);
const symbolValue = uncurry(Symbol.prototype.valueOf);
const mapForEach = uncurry(Map.prototype.forEach);
const mapSet = uncurry(Map.prototype.set);
const setForEach = uncurry(Set.prototype.forEach);
const setAdd = uncurry(Set.prototype.add);
const mapGet = uncurry(Map.prototype.get);
const resizable = getter(ArrayBuffer.prototype, 'resizable') as (value: unknown) => boolean;
const maxByteLength = getter(ArrayBuffer.prototype, 'maxByteLength') as (value: unknown) => number;
const transferBuffer = uncurry(ArrayBuffer.prototype.transfer);
const NativeArray = Array;
const NativeMap = Map;
const NativeSet = Set;
const NativeDate = Date;
const NativeRegExp = RegExp;
const NativeArrayBuffer = ArrayBuffer;
const NativeDataView = DataView;
const NativeObject = Object;

/** Built-ins that structuredClone refuses, with a check of each one's internal slot (none has side effects). */
const UNCLONEABLE = table<(value: unknown) => unknown>({
  '[object Symbol]': symbolValue,
  '[object Promise]': uncurry(Promise.prototype.then),
  '[object WeakMap]': (value) => uncurry(WeakMap.prototype.has)(value, {}),
  '[object WeakSet]': (value) => uncurry(WeakSet.prototype.has)(value, {}),
  '[object WeakRef]': uncurry(WeakRef.prototype.deref),
  '[object FinalizationRegistry]': (value) => uncurry(FinalizationRegistry.prototype.unregister)(value, {}),
  '[object SharedArrayBuffer]': getter(SharedArrayBuffer.prototype, 'byteLength'),
});

/** The constructors of typed arrays, by name; and of the errors whose name a clone keeps. */
const TYPED_ARRAYS = table<new (buffer: ArrayBuffer, byteOffset: number, length: number) => object>({});
for (const name of ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'Float16Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array']) {
  const constructor = (globalThis as Record<string, unknown>)[name];
  if (typeof constructor === 'function') TYPED_ARRAYS[name] = constructor as (typeof TYPED_ARRAYS)[string];
}
const ERRORS = table<ErrorConstructor>({ Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError });

/** The descriptor of a property a clone gets (CreateDataProperty), reused: null-prototype, so no inherited `get` can interfere. */
const DATA = NativeObject.assign(NativeObject.create(null) as PropertyDescriptor, { value: undefined, writable: true, enumerable: true, configurable: true });
const defineData = (target: object, key: string, value: unknown, enumerable: boolean) => {
  DATA.value = value;
  DATA.enumerable = enumerable;
  defineProperty(target, key, DATA);
  DATA.value = undefined;
};

/** What a frame of the walk fills: an object's or an array's properties, a Map's or a Set's entries, an error's cause. */
const OBJECT = 0;
const ARRAY = 1;
const MAP = 2;
const SET = 3;
const CAUSE = 4;
/** A frame's fields on the stack: source, target, kind, contents, next content, extra (an array's length, a Map's key). */
const FRAME = 6;
const ObjectPrototype = Object.prototype;
const ArrayPrototype = Array.prototype;

export default function install(_host: unknown, global: Global, internals: Internals): void {
  const { DOMException, platformClasses } = internals.core;
  const refuse = (what: string) => new DOMException(`${what} could not be cloned.`, 'DataCloneError');

  defineGlobal(global, 'structuredClone', function structuredClone(value: unknown, options: unknown = undefined) {
    requireArguments(arguments.length, 1, 'structuredClone');
    const transfer = transferList(dictionary(options, 'structuredClone options')?.transfer);
    const walk = new Walk();
    // Transferred buffers: the clone's views are made on a new buffer, which gets the bytes once
    // the walk succeeded; only then is the original detached.
    for (let i = 0; i < transfer.length; i++) {
      const buffer = transfer[i] as ArrayBuffer;
      if (!brand(() => arrayBufferLength(buffer))) throw new DOMException(`#<${objectTag(buffer).slice(8, -1)}> in the transfer list is not transferable.`, 'DataCloneError');
      if (mapGet(walk.memory, buffer) !== undefined) throw new DOMException('The transfer list contains the same ArrayBuffer twice.', 'DataCloneError');
      if (isDetached(buffer)) throw new DOMException('An ArrayBuffer in the transfer list is detached.', 'DataCloneError');
      mapSet(walk.memory, buffer, newBufferLike(buffer));
    }
    const result = walk.run(value);
    for (let i = 0; i < transfer.length; i++) {
      const buffer = transfer[i] as ArrayBuffer;
      if (isDetached(buffer)) throw new DOMException('An ArrayBuffer in the transfer list was detached while it was cloned.', 'DataCloneError');
      copyBytes(buffer, mapGet(walk.memory, buffer) as ArrayBuffer);
      transferBuffer(buffer);
    }
    return result;
  });

  /**
   * One clone. Objects are made as they are met (and recorded in `memory` first, for cycles) and
   * filled from a stack of frames, depth first, in the order of the standard's serialization: any
   * depth fits in the run's memory. A property is stored by assignment, which defines it, unless
   * its key is one the prototype has (`__proto__`, `toString`, or a setter a connector added): then
   * it is defined explicitly.
   */
  class Walk {
    readonly memory = new NativeMap<object, unknown>();
    /** FRAME entries per frame, made with the first frame. */
    stack: unknown[] | null = null;
    depth = 0;

    run(root: unknown): unknown {
      const result = this.value(root);
      const stack = this.stack;
      while (this.depth > 0) {
        const base = (this.depth - 1) * FRAME;
        const target = stack![base + 1] as Record<string, unknown>;
        const kind = stack![base + 2] as number;
        const contents = stack![base + 3] as unknown[];
        const next = stack![base + 4] as number;
        if (next === contents.length) {
          // An array's holes at its end.
          if (kind === ARRAY) (target as unknown as unknown[]).length = stack![base + 5] as number;
          for (let i = 0; i < FRAME; i++) stack![base + i] = undefined;
          this.depth--;
          continue;
        }
        stack![base + 4] = next + 1;
        const item = contents[next];
        if (kind <= ARRAY) {
          // A getter met earlier may have deleted the property: it is skipped then.
          const source = stack![base] as Record<string, unknown>;
          const key = item as string;
          if (!hasOwn(source, key)) continue;
          const copy = this.value(source[key]);
          if (key in (kind === OBJECT ? ObjectPrototype : ArrayPrototype)) defineData(target, key, copy, true);
          else target[key] = copy;
        } else if (kind === MAP) {
          if (next % 2 === 0) stack![base + 5] = this.value(item);
          else mapSet(target, stack![base + 5], this.value(item));
        } else if (kind === SET) setAdd(target, this.value(item));
        else defineData(target, 'cause', this.value(item), false);
      }
      return result;
    }

    /** The clone of a value: primitives as they are, objects made (and their contents pushed) or found in memory. */
    value(value: unknown): unknown {
      if (typeof value !== 'object' || value === null) {
        if (typeof value === 'function') throw refuse(`function ${(value as { name?: unknown }).name || 'anonymous'}`);
        if (typeof value === 'symbol') throw refuse(`Symbol(${value.description ?? ''})`);
        return value;
      }
      const known = mapGet(this.memory, value);
      return known !== undefined ? known : this.object(value);
    }

    push(source: object, target: object, kind: number, contents: unknown[], extra: unknown = undefined): void {
      const stack = (this.stack ??= list());
      const base = this.depth++ * FRAME;
      stack[base] = source;
      stack[base + 1] = target;
      stack[base + 2] = kind;
      stack[base + 3] = contents;
      stack[base + 4] = 0;
      stack[base + 5] = extra;
    }

    remember<T>(value: object, copy: T): T {
      mapSet(this.memory, value, copy);
      return copy;
    }

    object(value: object): unknown {
      // Most values are plain objects, known by their prototype without the costlier tag. (An
      // object whose prototype was set to Object.prototype is cloned as a plain one, whatever it was.)
      if (getPrototypeOf(value) === ObjectPrototype) return this.properties(value);
      if (isArray(value)) {
        const length = (value as unknown[]).length;
        const contents = keys(value);
        if (contents.length === 0) return this.remember(value, new NativeArray(length));
        const copy = this.remember(value, new NativeArray());
        this.push(value, copy, ARRAY, contents, length);
        return copy;
      }
      if (isView(value)) {
        const name = typedArrayName(value);
        const buffer = this.value(name ? typedArrayBuffer(value) : dataViewBuffer(value)) as ArrayBuffer;
        if (!name) return this.remember(value, new NativeDataView(buffer, dataViewOffset(value), dataViewLength(value)));
        const Typed = TYPED_ARRAYS[name];
        if (!Typed) throw refuse(`#<${name}>`);
        return this.remember(value, new Typed(buffer, typedArrayOffset(value), typedArrayElements(value)));
      }
      const tag = objectTag(value);
      switch (tag) {
        case '[object Object]':
          return this.properties(value);
        case '[object Boolean]':
          if (brand(() => booleanValue(value))) return this.remember(value, NativeObject(booleanValue(value)));
          break;
        case '[object Number]':
          if (brand(() => numberValue(value))) return this.remember(value, NativeObject(numberValue(value)));
          break;
        case '[object String]':
          if (brand(() => stringValue(value))) return this.remember(value, NativeObject(stringValue(value)));
          break;
        case '[object BigInt]':
          if (brand(() => bigintValue(value))) return this.remember(value, NativeObject(bigintValue(value)));
          break;
        case '[object Date]':
          if (brand(() => dateValue(value))) return this.remember(value, new NativeDate(dateValue(value)));
          break;
        case '[object RegExp]':
          if (brand(() => regExpSource(value))) {
            let flags = '';
            for (let i = 0; i < REGEXP_FLAGS.length; i++) if (REGEXP_FLAGS[i].flag(value)) flags += REGEXP_FLAGS[i].letter;
            return this.remember(value, new NativeRegExp(regExpSource(value), flags));
          }
          break;
        case '[object Map]':
          if (brand(() => mapForEach(value, () => undefined))) {
            const entries = list<unknown>();
            mapForEach(value, (entry: unknown, key: unknown) => {
              entries[entries.length] = key;
              entries[entries.length] = entry;
            });
            const copy = this.remember(value, new NativeMap());
            this.push(value, copy, MAP, entries);
            return copy;
          }
          break;
        case '[object Set]':
          if (brand(() => setForEach(value, () => undefined))) {
            const entries = list<unknown>();
            setForEach(value, (entry: unknown) => {
              entries[entries.length] = entry;
            });
            const copy = this.remember(value, new NativeSet());
            this.push(value, copy, SET, entries);
            return copy;
          }
          break;
        case '[object ArrayBuffer]':
          if (brand(() => arrayBufferLength(value))) {
            if (isDetached(value)) throw refuse('A detached ArrayBuffer');
            const copy = newBufferLike(value as ArrayBuffer);
            copyBytes(value as ArrayBuffer, copy);
            return this.remember(value, copy);
          }
          break;
        default:
          if (UNCLONEABLE[tag] && brand(() => UNCLONEABLE[tag](value))) throw refuse(`#<${tag.slice(8, -1)}>`);
      }
      for (let i = 0; i < platformClasses.length; i++) {
        const platform: PlatformClass = platformClasses[i];
        if (!platform.is(value)) continue;
        if (!platform.clone) throw refuse(`${platform.name} object`);
        return this.remember(value, platform.clone(value));
      }
      if (isError ? isError(value) : tag === '[object Error]') {
        const copy = this.remember(value, cloneError(value as Error));
        const cause = getOwnPropertyDescriptor(value, 'cause');
        if (cause && 'value' in cause) this.push(value, copy, CAUSE, [cause.value]);
        return copy;
      }
      return this.properties(value);
    }

    /** Anything else keeps its own enumerable string-keyed properties, as a plain object. */
    properties(value: object): object {
      const contents = keys(value);
      if (contents.length === 0) return this.remember(value, {});
      const copy = this.remember(value, {});
      this.push(value, copy, OBJECT, contents);
      return copy;
    }
  }
}

/** An error of the same kind (one of the standard ones, else Error) with its message and stack; its cause comes after. */
function cloneError(value: Error): Error {
  const name = value.name;
  const Kind = typeof name === 'string' && hasOwn(ERRORS, name) ? ERRORS[name] : Error;
  const message = getOwnPropertyDescriptor(value, 'message');
  const copy = new Kind();
  if (message && 'value' in message) defineData(copy, 'message', `${message.value as string}`, false);
  const stack = getOwnPropertyDescriptor(value, 'stack');
  if (stack && typeof stack.value === 'string') defineData(copy, 'stack', stack.value, false);
  else delete (copy as { stack?: string }).stack;
  return copy;
}

const NOTHING: object[] = [];

/** WebIDL `sequence<object>`: the transfer option as a list. */
function transferList(value: unknown): object[] {
  if (value === undefined) return NOTHING;
  const items = list<object>();
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null || typeof (value as Iterable<unknown>)[Symbol.iterator] !== 'function') {
    throw new TypeError('structuredClone: the transfer option must be an iterable of objects.');
  }
  for (const item of value as Iterable<unknown>) {
    if ((typeof item !== 'object' && typeof item !== 'function') || item === null) throw new TypeError('structuredClone: the transfer option must be an iterable of objects.');
    items[items.length] = item;
  }
  return items;
}

/** Whether `check` returns: a built-in's method throws a TypeError for an object without its internal slot. */
function brand(check: () => unknown): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}

/** A new ArrayBuffer of the same length (and maximum length, when it can grow). */
function newBufferLike(buffer: ArrayBuffer): ArrayBuffer {
  const length = arrayBufferLength(buffer);
  return resizable(buffer) ? new NativeArrayBuffer(length, { maxByteLength: maxByteLength(buffer) }) : new NativeArrayBuffer(length);
}

function copyBytes(from: ArrayBuffer, to: ArrayBuffer): void {
  const length = min(arrayBufferLength(from), arrayBufferLength(to));
  if (length > 0) setBytes(new Uint8Array(to, 0, length), new Uint8Array(from, 0, length));
}
