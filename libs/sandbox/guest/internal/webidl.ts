import type { Global } from './global';
import { defineGlobal } from './global';

/**
 * Exposes a class as WebIDL interfaces are: its methods and accessors enumerable, a
 * `Symbol.toStringTag` of its name, and a global of that name.
 */
export function defineInterface(global: Global, name: string, Class: abstract new (...args: never[]) => unknown): void {
  for (const target of [Class.prototype as object, Class]) {
    for (const key of Object.getOwnPropertyNames(target)) {
      if (!['constructor', 'prototype', 'length', 'name'].includes(key)) Object.defineProperty(target, key, { enumerable: true });
    }
  }
  Object.defineProperty(Class.prototype, Symbol.toStringTag, { value: name, configurable: true });
  defineGlobal(global, name, Class);
}

/** Defines WebIDL constants (`Event.AT_TARGET`) on an interface and its prototype. */
export function defineConstants(Class: abstract new (...args: never[]) => unknown, constants: Record<string, number>): void {
  for (const [key, value] of Object.entries(constants)) {
    for (const target of [Class, Class.prototype as object]) Object.defineProperty(target, key, { value, enumerable: true });
  }
}

/** The object a dictionary argument's members are read from: null for undefined and null, a TypeError for other primitives. */
export function dictionary(value: unknown, what: string): Record<string, unknown> | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' && typeof value !== 'function') throw new TypeError(`${what} must be an object.`);
  return value as Record<string, unknown>;
}

/** A TypeError when a call has fewer arguments than the operation requires. */
export function requireArguments(given: number, required: number, what: string): void {
  if (given < required) throw new TypeError(`${what}: ${required} argument${required === 1 ? '' : 's'} required, but only ${given} present.`);
}

/** WebIDL `DOMString`: symbols throw a TypeError. */
export const domString = (value: unknown): string => `${value as string}`;
