import type { SecretFilter } from '@gi/domain';
import type { QuickJSContext, QuickJSHandle, VmCallResult } from 'quickjs-emscripten';
import { RUN_BUDGET } from '../run/run-budget';

/** What ends a text cut to the run budget. */
export const CUT_MARK = '…';

/**
 * Values crossing between the host and one sandbox's context. They cross as JSON text, made and read
 * by the sandbox's own `JSON`; texts are read with its own `String`, `String.prototype.slice`,
 * `Object.prototype.toString` and `Function.prototype.toString`. All are captured when the sandbox is
 * made, before any connector code exists, so a connector that replaces them changes its own code only.
 * Every read may run connector code (a getter, `toJSON`, `toString`), so each is guarded, and no more
 * of a string than the host keeps is ever copied out of the sandbox.
 */
export class GuestValues {
  private readonly jsonStringify: QuickJSHandle;
  private readonly jsonParse: QuickJSHandle;
  private readonly objectToString: QuickJSHandle;
  private readonly string: QuickJSHandle;
  private readonly stringSlice: QuickJSHandle;
  private readonly functionToString: QuickJSHandle;
  private readonly objectFreeze: QuickJSHandle;

  /** `secrets`: those of the run being served, redacted from every text shown or described. */
  constructor(
    private readonly ctx: QuickJSContext,
    private readonly secrets: () => SecretFilter,
  ) {
    const json = ctx.getProp(ctx.global, 'JSON');
    this.jsonStringify = ctx.getProp(json, 'stringify');
    this.jsonParse = ctx.getProp(json, 'parse');
    const object = ctx.getProp(ctx.global, 'Object');
    const prototype = ctx.getProp(object, 'prototype');
    this.objectToString = ctx.getProp(prototype, 'toString');
    this.string = ctx.getProp(ctx.global, 'String');
    const stringPrototype = ctx.getProp(this.string, 'prototype');
    this.stringSlice = ctx.getProp(stringPrototype, 'slice');
    const fn = ctx.getProp(ctx.global, 'Function');
    const fnPrototype = ctx.getProp(fn, 'prototype');
    this.functionToString = ctx.getProp(fnPrototype, 'toString');
    this.objectFreeze = ctx.getProp(object, 'freeze');
    for (const handle of [json, object, prototype, stringPrototype, fn, fnPrototype]) handle.dispose();
  }

  /** A value made in the sandbox from JSON text. */
  parseJson(text: string): VmCallResult<QuickJSHandle> {
    const textHandle = this.ctx.newString(text);
    const parsed = this.ctx.callFunction(this.jsonParse, this.ctx.undefined, textHandle);
    textHandle.dispose();
    return parsed;
  }

  /** `JSON.stringify(value)` in the sandbox, its result left there (a string, or undefined for a value without JSON). */
  stringify(value: QuickJSHandle): VmCallResult<QuickJSHandle> {
    return this.ctx.callFunction(this.jsonStringify, this.ctx.undefined, value);
  }

  /** `Object.freeze(value)` in the sandbox. */
  freeze(value: QuickJSHandle): VmCallResult<QuickJSHandle> {
    return this.ctx.callFunction(this.objectFreeze, this.ctx.undefined, value);
  }

  /** A JSON value made in the sandbox and frozen (one level deep: the values read here are flat). */
  frozenJson(json: string): VmCallResult<QuickJSHandle> {
    const parsed = this.parseJson(json);
    if (parsed.error) return parsed;
    const frozen = this.freeze(parsed.value);
    if (frozen.error) {
      parsed.value.dispose();
      return frozen;
    }
    frozen.value.dispose();
    return parsed;
  }

  /**
   * The JSON text of a value, at most `max` characters of it; undefined when it has none (a function,
   * a cycle, a throwing getter).
   */
  json(value: QuickJSHandle, max: number): string | undefined {
    const result = this.stringify(value);
    if (result.error) {
      result.error.dispose();
      return undefined;
    }
    const text = this.ctx.typeof(result.value) === 'string' ? this.readString(result.value, max) : undefined;
    result.value.dispose();
    return text;
  }

  /** `typeof value`, with `null` told apart from objects. */
  typeOf(value: QuickJSHandle): string {
    const kind = this.ctx.typeof(value);
    return kind === 'object' && this.tag(value) === '[object Null]' ? 'null' : kind;
  }

  /** `Object.prototype.toString.call(value)`, or null when it cannot be read. */
  tag(value: QuickJSHandle): string | null {
    const result = this.ctx.callFunction(this.objectToString, value);
    if (result.error) {
      result.error.dispose();
      return null;
    }
    const text = this.ctx.getString(result.value);
    result.value.dispose();
    return text;
  }

  /** The source text of a function, read with the original `Function.prototype.toString`; null for anything else. */
  sourceOf(value: QuickJSHandle): string | null {
    if (this.ctx.typeof(value) !== 'function') return null;
    const result = this.ctx.callFunction(this.functionToString, value);
    if (result.error) {
      result.error.dispose();
      return null;
    }
    const text = this.ctx.typeof(result.value) === 'string' ? this.ctx.getString(result.value) : null;
    result.value.dispose();
    return text;
  }

  /**
   * `{message, stack}` of a thrown value, cut to the run's budget (no more than that is ever copied
   * out of the sandbox).
   */
  describe(error: QuickJSHandle): { message: string; stack: string } {
    const { errorMessageChars, errorStackChars } = RUN_BUDGET;
    const secrets = this.secrets();
    // The window of each text is read: past the kept characters (so the cut is marked) and past a secret that straddles the cut.
    const cut = (text: string, max: number) => secrets.cut(text, max, CUT_MARK);
    if (this.isError(error)) {
      const name = this.propText(error, 'name', 100) ?? 'Error';
      const message = this.propText(error, 'message', secrets.window(errorMessageChars)) ?? '';
      return { message: cut(`${name}: ${message}`, errorMessageChars), stack: cut(this.propText(error, 'stack', secrets.window(errorStackChars)) ?? '', errorStackChars) };
    }
    return { message: cut(`Uncaught ${this.show(error, secrets.window(errorMessageChars))}`, errorMessageChars), stack: '' };
  }

  /** How a value reads as text that leaves the run: the run's secrets redacted, then cut to `max` characters (`mark` ending a cut). */
  shown(value: QuickJSHandle, max: number, mark = ''): string {
    const secrets = this.secrets();
    return secrets.cut(this.show(value, secrets.window(max)), max, mark);
  }

  /** How a logged value reads, at most `max` characters of it: strings as they are, errors as "Name: message", the rest as JSON. */
  show(value: QuickJSHandle, max: number): string {
    const kind = this.ctx.typeof(value);
    if (kind === 'string') return this.readString(value, max);
    if (kind === 'object' && this.isError(value)) {
      return `${this.propText(value, 'name', 100) ?? 'Error'}: ${this.propText(value, 'message', max) ?? ''}`.slice(0, max);
    }
    if (kind === 'object') {
      const json = this.json(value, max);
      if (json !== undefined) return json;
    }
    return this.text(value, max) ?? '[value that cannot be shown]';
  }

  /** Whether a value reads as an error: an Error (of any kind) or a DOMException. */
  private isError(value: QuickJSHandle): boolean {
    const tag = this.tag(value);
    return tag === '[object Error]' || tag === '[object DOMException]';
  }

  /** `String(value)`, at most `max` characters of it; undefined when that throws. */
  private text(value: QuickJSHandle, max: number): string | undefined {
    const result = this.ctx.callFunction(this.string, this.ctx.undefined, value);
    if (result.error) {
      result.error.dispose();
      return undefined;
    }
    const text = this.readString(result.value, max);
    result.value.dispose();
    return text;
  }

  private propText(value: QuickJSHandle, name: string, max: number): string | undefined {
    const result = this.ctx.getProp(value, name);
    const text = this.ctx.typeof(result) === 'undefined' ? undefined : this.text(result, max);
    result.dispose();
    return text;
  }

  /**
   * A string of the sandbox, at most its first `max` characters: a connector's 20 MiB string is cut
   * inside the sandbox, and only what the host keeps is ever copied out.
   */
  private readString(value: QuickJSHandle, max: number): string {
    const ctx = this.ctx;
    const length = ctx.getProp(value, 'length');
    const long = ctx.getNumber(length) > max;
    length.dispose();
    if (!long) return ctx.getString(value);
    const start = ctx.newNumber(0);
    const end = ctx.newNumber(Math.max(0, max));
    const cut = ctx.callFunction(this.stringSlice, value, start, end);
    start.dispose();
    end.dispose();
    if (cut.error) {
      cut.error.dispose();
      return '';
    }
    const text = ctx.getString(cut.value);
    cut.value.dispose();
    return text;
  }
}
