import type { Progress } from '@gi/domain';
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle, VmCallResult } from 'quickjs-emscripten';
import { ConnectorHttpError, performHttpRequest } from './connector-http';
import type { LogBuffer } from './log-buffer';
import { parseReadFileOptions, ReadFileRefused, type ReadFileOptions } from './read-file-options';
import type { RunInput } from './run-input';
import { formatBytes, type SandboxEnvironment } from './sandbox-options';

type HostResult = QuickJSHandle | VmCallResult<QuickJSHandle> | void;

/** The ResponseBody JSON is larger than the limit. */
export class ResponseTooLarge extends Error {}
/** Reading the ResponseBody failed inside the sandbox (a throwing getter, a cycle, a BigInt...). */
export class CollectError extends Error {}

/**
 * The `Context` API (and `console`) of one run, built from host functions: nothing is compiled per
 * run, and no host object ever becomes reachable from connector code. Values cross the boundary
 * as JSON text, converted by the sandbox's own `JSON`, captured before the connector runs.
 */
export class ContextApi {
  raised: { title: string; message: string } | null = null;
  /** Called when an HTTP request settles, so a run waiting on host work wakes up. */
  onHostSettled: () => void = () => {};
  private readonly owned: QuickJSHandle[] = [];
  private readonly pending = new Set<QuickJSDeferredPromise>();
  private readonly cancel = new AbortController();
  private readonly stringify: QuickJSHandle;
  private readonly parse: QuickJSHandle;
  private readonly toStringTag: QuickJSHandle;
  private readonly toText: QuickJSHandle;
  private entity: QuickJSHandle | null = null;
  private entityLoaded = false;
  private response: QuickJSHandle | null = null;
  private ended = false;

  constructor(
    private readonly ctx: QuickJSContext,
    private readonly env: SandboxEnvironment,
    private readonly input: RunInput,
    private readonly logs: LogBuffer,
  ) {
    const json = this.own(ctx.getProp(ctx.global, 'JSON'));
    this.stringify = this.own(ctx.getProp(json, 'stringify'));
    this.parse = this.own(ctx.getProp(json, 'parse'));
    const objectPrototype = this.own(ctx.getProp(this.own(ctx.getProp(ctx.global, 'Object')), 'prototype'));
    this.toStringTag = this.own(ctx.getProp(objectPrototype, 'toString'));
    this.toText = this.own(ctx.getProp(ctx.global, 'String'));
  }

  get pendingCalls(): number {
    return this.pending.size;
  }

  /** Defines the globals `Context` and `console`. */
  install(): void {
    const ctx = this.ctx;
    const context = this.own(ctx.newObject());
    this.define(context, 'GetRequestEntity', () => this.getRequestEntity());
    this.define(context, 'SetResponseEntity', (value) => this.setResponseEntity(value));
    this.define(context, 'RaiseError', (title, message) => this.raiseError(title, message));
    const log = this.define(context, 'Log', (...args) => this.log('info', args));
    this.define(context, 'SetProgress', (percent, message) => this.setProgress(percent, message));
    this.define(context, 'ReadFile', (id, options) => this.readFile(id, options));
    const http = this.own(ctx.newObject());
    this.define(http, 'Request', (request) => this.request(request));
    ctx.setProp(context, 'Http', http);
    const console = this.own(ctx.newObject());
    for (const name of ['log', 'info', 'debug', 'warn']) ctx.setProp(console, name, log);
    this.define(console, 'error', (...args) => this.log('error', args));
    const freeze = this.own(ctx.getProp(this.own(ctx.getProp(ctx.global, 'Object')), 'freeze'));
    for (const target of [http, context, console]) this.own(ctx.unwrapResult(ctx.callFunction(freeze, ctx.undefined, target)));
    ctx.setProp(ctx.global, 'Context', context);
    ctx.setProp(ctx.global, 'console', console);
  }

  /** `{"body": ResponseBody}` as JSON, or undefined when the connector never touched an entity. */
  collect(): string | undefined {
    const source = this.response ?? (this.entityLoaded ? this.entity : undefined);
    if (source === undefined) return undefined;
    const ctx = this.ctx;
    const wrapper = this.own(ctx.newObject());
    if (source !== null) {
      const body = ctx.getProp(source, 'ResponseBody'); // may run a getter: the interrupt handler still guards it
      ctx.setProp(wrapper, 'body', body);
      body.dispose();
    }
    const result = ctx.callFunction(this.stringify, ctx.undefined, wrapper);
    if (result.error) {
      const { message } = this.describe(this.own(result.error));
      throw new CollectError(message);
    }
    const text = this.own(result.value);
    if (ctx.typeof(text) !== 'string') throw new CollectError('it is not JSON data.');
    if (ctx.getNumber(this.own(ctx.getProp(text, 'length'))) > this.env.limits.maxResponseBytes) throw new ResponseTooLarge();
    return ctx.getString(text);
  }

  /** `{message, stack}` of a thrown value; every read may run connector code, so each is guarded. */
  describe(error: QuickJSHandle): { message: string; stack: string } {
    if (this.tag(error) === '[object Error]') {
      const name = this.propText(error, 'name') ?? 'Error';
      const message = this.propText(error, 'message') ?? '';
      return { message: `${name}: ${message}`.slice(0, 2000), stack: (this.propText(error, 'stack') ?? '').slice(0, 4000) };
    }
    return { message: `Uncaught ${this.show(error)}`.slice(0, 2000), stack: '' };
  }

  /** Stops host work and frees every handle this API holds. */
  dispose(): void {
    this.ended = true;
    this.cancel.abort();
    for (const deferred of this.pending) deferred.dispose();
    this.pending.clear();
    for (const handle of [this.entity, this.response]) if (handle?.alive) handle.dispose();
    for (const handle of this.owned.reverse()) if (handle.alive) handle.dispose();
    this.owned.length = 0;
  }

  private own(handle: QuickJSHandle): QuickJSHandle {
    this.owned.push(handle);
    return handle;
  }

  private define(target: QuickJSHandle, name: string, fn: (...args: QuickJSHandle[]) => HostResult): QuickJSHandle {
    const handle = this.own(this.ctx.newFunction(name, (...args) => fn(...args)));
    this.ctx.setProp(target, name, handle);
    return handle;
  }

  private getRequestEntity(): HostResult {
    const ctx = this.ctx;
    if (!this.entityLoaded) {
      const entity = this.input.entity;
      if (entity !== null && entity !== undefined) {
        const text = ctx.newString(JSON.stringify(entity));
        const parsed = ctx.callFunction(this.parse, ctx.undefined, text);
        text.dispose();
        if (parsed.error) return parsed;
        this.entity = parsed.value;
      }
      this.entityLoaded = true;
    }
    return this.entity ? this.entity.dup() : ctx.null;
  }

  private setResponseEntity(value: QuickJSHandle | undefined): HostResult {
    const ctx = this.ctx;
    const kind = value === undefined ? 'undefined' : ctx.typeof(value);
    const tag = value && kind === 'object' ? this.tag(value) : null;
    if (!value || kind !== 'object' || tag === '[object Null]' || tag === '[object Array]') {
      const got = tag === '[object Null]' ? 'null' : tag === '[object Array]' ? 'an array' : kind;
      return { error: ctx.newError({ name: 'TypeError', message: `Context.SetResponseEntity expects the entity object, not ${got}.` }) };
    }
    this.response?.dispose();
    this.response = value.dup();
  }

  private raiseError(title: QuickJSHandle | undefined, message: QuickJSHandle | undefined): HostResult {
    this.raised ??= { title: title ? this.show(title) : '', message: message ? this.show(message) : '' };
    // Thrown to stop the statements that follow; the interrupt handler then ends the run even if
    // the connector catches this.
    return { error: this.ctx.newError(`Context.RaiseError: ${this.raised.title}`) };
  }

  private log(level: 'info' | 'error', args: QuickJSHandle[]): void {
    const max = this.env.limits.maxLogBytes;
    let text = '';
    for (const arg of args) {
      text += (text ? ' ' : '') + this.show(arg);
      if (text.length > max) break;
    }
    this.logs.add(level, text.length > max ? text.slice(0, max) : text);
  }

  private setProgress(percent: QuickJSHandle | undefined, message: QuickJSHandle | undefined): HostResult {
    const ctx = this.ctx;
    const value = percent === undefined ? NaN : ctx.getNumber(percent);
    if (!Number.isFinite(value)) {
      return { error: ctx.newError({ name: 'TypeError', message: 'Context.SetProgress expects a percentage between 0 and 100.' }) };
    }
    const progress: Progress = { percent: Math.min(100, Math.max(0, value)) };
    if (message !== undefined && !['undefined', 'null'].includes(this.typeOf(message))) progress.message = this.show(message).slice(0, 1000);
    try {
      this.input.onProgress?.(progress);
    } catch {
      // A failing progress listener is the host's problem, never the connector's.
    }
  }

  /** `Context.Http.Request(request)`: a promise settled when the host request ends. */
  private request(request: QuickJSHandle | undefined): HostResult {
    const { deferred, promise, refuse } = this.hostCall('HTTP requests');
    if (!deferred) return promise;
    const json = request === undefined ? undefined : this.json(request);
    if (json === undefined) return refuse('Context.Http.Request expects an object like { method, url, headers, body }.');
    this.pending.add(deferred);
    performHttpRequest(JSON.parse(json), this.input.allowedHosts, this.env.http, this.cancel.signal).then(
      (response) => this.settle(deferred, () => this.parseJson(JSON.stringify(response))),
      (error: unknown) => this.settle(deferred, error instanceof ConnectorHttpError ? error.message : 'The HTTP request failed.'),
    );
    return promise;
  }

  /**
   * `Context.ReadFile(id, {offset, length, encoding})`: a promise of a file's bytes, as UTF-8 text,
   * base64 text or an ArrayBuffer. Only files of this run's own request can be read, at most
   * `maxReadFileBytes` per call; larger files are read in ranges.
   */
  private readFile(id: QuickJSHandle | undefined, options: QuickJSHandle | undefined): HostResult {
    const ctx = this.ctx;
    const { deferred, promise, refuse } = this.hostCall('HTTP requests and file reads');
    if (!deferred) return promise;
    if (!id || ctx.typeof(id) !== 'string') return refuse('Context.ReadFile expects the Id of a file of RequestFiles.');
    const fileId = ctx.getString(id);
    const cap = this.env.limits.maxReadFileBytes;
    let parsed: ReadFileOptions;
    try {
      const json = options === undefined || ['undefined', 'null'].includes(this.typeOf(options)) ? '{}' : this.json(options);
      parsed = parseReadFileOptions(json === undefined ? undefined : JSON.parse(json), cap);
    } catch (error) {
      return refuse(error instanceof ReadFileRefused ? error.message : 'Context.ReadFile options could not be read.');
    }
    const reader = this.input.readFile;
    if (!reader) return refuse(`No file with Id '${fileId.slice(0, 100)}' was uploaded with this request.`);
    const { offset, length, encoding } = parsed;
    this.pending.add(deferred);
    // Without a length, one byte more than the cap tells a file that does not fit from one that does.
    reader(fileId, { offset, length: length ?? cap + 1 }).then(
      (bytes) => {
        if (length === undefined && bytes.byteLength > cap) {
          return this.settle(deferred, `The file is larger than ${formatBytes(cap)} from offset ${offset}: read it in parts with { offset, length } (at most ${formatBytes(cap)} per call).`);
        }
        const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        this.settle(deferred, () => ({
          value:
            encoding === 'bytes'
              ? ctx.newArrayBuffer(buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength))
              : ctx.newString(buffer.toString(encoding)),
        }));
      },
      (error: unknown) => this.settle(deferred, error instanceof Error ? error.message : 'The file could not be read.'),
    );
    return promise;
  }

  /** A promise for a host call, refused at once when too many are in flight. */
  private hostCall(what: string): { deferred: QuickJSDeferredPromise | null; promise: QuickJSHandle; refuse: (message: string) => QuickJSHandle } {
    const ctx = this.ctx;
    const deferred = ctx.newPromise();
    const promise = deferred.handle.dup();
    const refuse = (message: string) => {
      const error = ctx.newError(message);
      deferred.reject(error);
      error.dispose();
      deferred.dispose();
      return promise;
    };
    const max = this.env.http.maxPendingCalls;
    if (this.pending.size >= max) {
      refuse(`Too many ${what} at once (at most ${max}): await some before starting more.`);
      return { deferred: null, promise, refuse };
    }
    return { deferred, promise, refuse };
  }

  private parseJson(text: string): VmCallResult<QuickJSHandle> {
    const textHandle = this.ctx.newString(text);
    const parsed = this.ctx.callFunction(this.parse, this.ctx.undefined, textHandle);
    textHandle.dispose();
    return parsed;
  }

  /** Settles a host call with the value `make` builds in the sandbox, or rejects it with a message. */
  private settle(deferred: QuickJSDeferredPromise, outcome: (() => VmCallResult<QuickJSHandle>) | string): void {
    if (this.ended || !this.pending.delete(deferred)) return;
    const ctx = this.ctx;
    if (typeof outcome === 'string') {
      const error = ctx.newError(outcome);
      deferred.reject(error);
      error.dispose();
    } else {
      let made: VmCallResult<QuickJSHandle>;
      try {
        made = outcome();
      } catch {
        // The value did not fit the run's memory.
        made = { error: ctx.newError('The value is too large for the connector\'s memory; read a smaller range.') };
      }
      if (made.error) deferred.reject(made.error);
      else deferred.resolve(made.value);
      (made.error ?? made.value).dispose();
    }
    deferred.dispose();
    this.onHostSettled();
  }

  private typeOf(value: QuickJSHandle): string {
    const kind = this.ctx.typeof(value);
    return kind === 'object' && this.tag(value) === '[object Null]' ? 'null' : kind;
  }

  /** `Object.prototype.toString.call(value)`, or null when it cannot be read. */
  private tag(value: QuickJSHandle): string | null {
    const result = this.ctx.callFunction(this.toStringTag, value);
    if (result.error) {
      result.error.dispose();
      return null;
    }
    const text = this.ctx.getString(result.value);
    result.value.dispose();
    return text;
  }

  /** The JSON text of a value, or undefined when it has none (a function, a cycle, a throwing getter). */
  private json(value: QuickJSHandle): string | undefined {
    const result = this.ctx.callFunction(this.stringify, this.ctx.undefined, value);
    if (result.error) {
      result.error.dispose();
      return undefined;
    }
    const text = this.ctx.typeof(result.value) === 'string' ? this.ctx.getString(result.value) : undefined;
    result.value.dispose();
    return text;
  }

  /** `String(value)`, or undefined when that throws. */
  private text(value: QuickJSHandle): string | undefined {
    const result = this.ctx.callFunction(this.toText, this.ctx.undefined, value);
    if (result.error) {
      result.error.dispose();
      return undefined;
    }
    const text = this.ctx.getString(result.value);
    result.value.dispose();
    return text;
  }

  private propText(value: QuickJSHandle, name: string): string | undefined {
    const result = this.ctx.getProp(value, name);
    const text = this.ctx.typeof(result) === 'undefined' ? undefined : this.text(result);
    result.dispose();
    return text;
  }

  /** How a logged value reads: strings as they are, errors as "Name: message", the rest as JSON. */
  private show(value: QuickJSHandle): string {
    const kind = this.ctx.typeof(value);
    if (kind === 'string') return this.ctx.getString(value);
    if (kind === 'object' && this.tag(value) === '[object Error]') return `${this.propText(value, 'name') ?? 'Error'}: ${this.propText(value, 'message') ?? ''}`;
    if (kind === 'object') {
      const json = this.json(value);
      if (json !== undefined) return json;
    }
    return this.text(value) ?? '[value that cannot be shown]';
  }
}
