import { defineGlobal } from '../internal/global';
import type { IntlHost, Wire, TextResult, LocaleRecord, OptionsMode, OptionType, Slot } from './common';
import { SCHEMAS, lengthOf, toPrimitive } from './common';

/**
 * What every Intl object is made with: the built-ins kept before connector code runs, the state of each
 * object (its kind and configuration), and the reading of locales and options as ECMA-402 reads them.
 */
export function intlKit(host: IntlHost) {
  const { stringify } = JSON;
  const { apply, construct } = Reflect;
  const { defineProperty } = Object;
  const dateNow = Date.now;
  const timeValue = Date.prototype.getTime;
  const numberValue = Number.prototype.valueOf;
  const bigintValue = BigInt.prototype.valueOf;
  const toUpperCase = String.prototype.toUpperCase;
  const toLowerCase = String.prototype.toLowerCase;
  const typedArrayLength = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Int8Array.prototype), 'length')?.get as (this: unknown) => number;
  const iteratorOf = (value: unknown) => (value as Record<symbol, () => Iterator<unknown>>)[Symbol.iterator];

  /** The state of every Intl object made here: its kind and configuration. */
  const slots = new WeakMap<object, Slot>();
  const slotOf = (value: unknown, kind: string, method: string): Slot => {
    const slot = typeof value === 'object' && value !== null ? slots.get(value) : undefined;
    if (!slot || slot.kind !== kind) throw new TypeError(`Method Intl.${kind}.prototype.${method} called on an incompatible receiver`);
    return slot;
  };
  const locales = new WeakMap<object, LocaleRecord>();
  const schemas: Record<string, [OptionsMode, Array<[string, OptionType]>]> = {};
  for (const [kind, [mode, names]] of Object.entries(SCHEMAS)) {
    schemas[kind] = [mode, names.split(' ').map((field) => field.split(':') as [string, OptionType]).map(([name, type]) => [name, type ?? 's'])];
  }

  /**
   * CanonicalizeLocaleList's reading: the tags as JSON text (the host checks and canonicalizes them).
   * When reading throws, `failed` first gets the tags read before, so that an invalid one is reported as Node reports it.
   */
  const readLocales = (value: unknown, failed: (tags: string) => void): string => {
    if (value === undefined) return '[]';
    if (typeof value === 'string' || locales.has(value as object)) return `[${stringify(tagOf(value))}]`;
    if (value === null) throw new TypeError('Cannot convert undefined or null to object');
    let json = '';
    try {
      const list = Object(value) as Record<number, unknown> & { length?: unknown };
      const length = lengthOf(list.length);
      for (let k = 0; k < length; k++) {
        if (!(k in list)) continue;
        const item = list[k];
        if (typeof item !== 'string' && (typeof item !== 'object' || item === null)) throw new TypeError('Language ID should be string or object.');
        json += `${json === '' ? '' : ','}${stringify(tagOf(item))}`;
      }
    } catch (error) {
      failed(`[${json}]`);
      throw error;
    }
    return `[${json}]`;
  };
  const tagOf = (value: unknown) => locales.get(value as object)?.tag ?? `${value as string}`;

  /**
   * The options of an object of `kind`, read in the standard's order (getters run, values converted),
   * as JSON text. When reading throws, `failed` first gets what was read before.
   */
  const readOptions = (kind: string, options: unknown, schema: string, failed: (json: string) => void): string => {
    if (options === undefined) return '{}';
    let json = '';
    try {
      const [mode, fields] = schemas[schema];
      if (options === null) throw new TypeError('Cannot convert undefined or null to object');
      if (mode === 'object' && typeof options !== 'object' && typeof options !== 'function') throw new TypeError(`Options of Intl.${kind} must be an object`);
      const source = Object(options) as Record<string, unknown>;
      for (const [name, type] of fields) {
        const value = source[name];
        if (value === undefined) continue;
        let text: string;
        if (type === 'b') text = value ? 'true' : 'false';
        else if (type === 'n') text = stringify(`${+(value as number)}`);
        else if (type === 'g') text = value === true ? 'true' : !value ? 'false' : stringify(`${value as string}`);
        else text = stringify(`${value as string}`);
        json += `${json === '' ? '' : ','}"${name}":${text}`;
      }
    } catch (error) {
      failed(`{${json}}`);
      throw error;
    }
    return `{${json}}`;
  };

  /**
   * The configuration of an object of `kind`: its locales and options as JSON text. When reading
   * throws, what was read before is checked first, so that an invalid value read earlier is reported
   * as Node reports it.
   */
  const configure = (kind: string, localesValue: unknown, options: unknown, schema = kind): string => {
    const tags = readLocales(localesValue, (read) => host.create(kind, `[${read},{}]`, true));
    return `[${tags},${readOptions(kind, options, schema, (read) => host.create(kind, `[${tags},${read}]`, true))}]`;
  };

  /** An object of `kind` for the configuration: checked by the host, whose errors are Node's. */
  const initialize = (target: object, kind: string, localesValue: unknown, options: unknown) => {
    const config = configure(kind, localesValue, options);
    host.create(kind, config);
    slots.set(target, { kind, config });
  };

  /**
   * A text for the host: as it is, or, when it has lone surrogates (which the engine's UTF-8
   * hand-over of strings would replace), as its UTF-16 code units.
   */
  const wire = (text: string): Wire => {
    if (text.isWellFormed()) return text;
    const units = new Uint16Array(text.length);
    for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
    return units.buffer;
  };

  const textOf = (result: TextResult): string => (typeof result === 'string' ? result : result[0]);

  /** A method of the host's formatter; only the arguments given cross (each one costs a conversion). */
  const call = (method: string, slot: Slot, a?: unknown, b?: unknown, bigints?: number) => {
    if (bigints) return host.call(method, slot.kind, slot.config, a, b, bigints);
    if (b !== undefined) return host.call(method, slot.kind, slot.config, a, b);
    if (a !== undefined) return host.call(method, slot.kind, slot.config, a);
    return host.call(method, slot.kind, slot.config);
  };

  /** ToIntlMathematicalValue's first steps: a number, a numeric string kept exact, or a BigInt as text (bit 1 of the flag). */
  const mathValue = (value: unknown): [unknown, number] => {
    const primitive = toPrimitive(value);
    if (typeof primitive === 'bigint') return [`${primitive}`, 1];
    if (typeof primitive === 'string') return [primitive, 0];
    return [+(primitive as number), 0];
  };

  const required = (value: unknown, what: string) => {
    if (value === undefined) throw new TypeError(`${what} is undefined`);
    return value;
  };

  const supportedLocalesOf = (kind: string) =>
    function supportedLocalesOf(localesValue: unknown, options: unknown = undefined) {
      return host.call('supportedLocalesOf', kind, configure(kind, localesValue, options, 'supportedLocalesOf'));
    };

  /** Defines the static `supportedLocalesOf` and the prototype's `Symbol.toStringTag` of an Intl constructor. */
  const finish = (ctor: { prototype: object }, kind: string, length: number, withSupported = true) => {
    if (withSupported) defineGlobal(ctor, 'supportedLocalesOf', supportedLocalesOf(kind));
    defineProperty(ctor.prototype, Symbol.toStringTag, { value: `Intl.${kind}`, configurable: true });
    defineProperty(ctor, 'length', { value: length, configurable: true });
  };

  /** DateTimeFormat, NumberFormat and Collator also construct when called without `new`. */
  const constructibleWithoutNew = <T extends abstract new (...args: never[]) => object>(cls: T, kind: string): T => {
    const ctor = function (this: unknown, ...args: unknown[]) {
      return construct(cls as unknown as new (...a: unknown[]) => object, args, new.target ?? ctor);
    };
    defineProperty(ctor, 'name', { value: kind, configurable: true });
    defineProperty(ctor, 'prototype', { value: cls.prototype, writable: false, enumerable: false, configurable: false });
    defineGlobal(cls.prototype, 'constructor', ctor);
    return ctor as unknown as T;
  };

  return { host, apply, bigintValue, call, configure, construct, constructibleWithoutNew, dateNow, defineProperty, finish, initialize, iteratorOf, locales, mathValue, numberValue, readLocales, readOptions, required, schemas, slotOf, slots, stringify, supportedLocalesOf, tagOf, textOf, timeValue, toLowerCase, toUpperCase, typedArrayLength, wire };
}

export type IntlKit = ReturnType<typeof intlKit>;
