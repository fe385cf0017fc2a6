import type { Progress } from '@gi/domain';
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle, VmCallResult } from 'quickjs-emscripten';
import { ConnectorHttpError, performHttpRequest } from './connector-http';
import type { LogBuffer } from './log-buffer';
import { parseReadFileOptions, ReadFileRefused, type ReadFileOptions } from './read-file-options';
import type { RunInput } from './run-input';
import { logLimitVerdict, pendingCallsVerdict, type Verdict } from './run-verdict';
import { formatBytes, type SandboxEnvironment } from './sandbox-options';

type HostResult = QuickJSHandle | VmCallResult<QuickJSHandle> | void;

/** The ResponseBody JSON is larger than the limit. */
export class ResponseTooLarge extends Error {}
/** Reading the ResponseBody failed inside the sandbox (a throwing getter, a cycle, a BigInt...). */
export class CollectError extends Error {}

/** The run the API serves once it is bound. */
export interface ApiRun {
  input: RunInput;
  logs: LogBuffer;
  /** Called when a host call settles, so a run waiting on host work wakes up. */
  onHostSettled: () => void;
}

/** What the API holds for the run it serves; dropped whole when the sandbox is reset. */
class RunState {
  /** Why the run must end now (RaiseError, or a limit passed); the interrupt handler then stops the code. */
  stopped: Verdict | null = null;
  entity: QuickJSHandle | null = null;
  entityLoaded = false;
  response: QuickJSHandle | null = null;
  ended = false;
  readonly pending = new Set<QuickJSDeferredPromise>();
  /** Made for the first host request only: creating and aborting a controller is not free. */
  cancel: AbortController | null = null;

  constructor(readonly run: ApiRun) {}
}

/**
 * The `Context` API (and `console`) of one sandbox, built from host functions: nothing is compiled,
 * and no host object ever becomes reachable from connector code. Values cross the boundary as JSON
 * text, converted by the sandbox's own `JSON`, captured before any connector code exists.
 *
 * It is installed while the sandbox is prepared, before its memory image is taken, and serves one
 * run at a time: bound when a run starts, dropped with everything it made for the run when the
 * sandbox is reset. Until a run is bound every function throws, so code that runs early can reach
 * nothing.
 */
export class ContextApi {
  private state: RunState | null = null;
  private readonly stringify: QuickJSHandle;
  private readonly parse: QuickJSHandle;
  private readonly toStringTag: QuickJSHandle;
  private readonly toText: QuickJSHandle;
  private readonly functionSource: QuickJSHandle;

  constructor(
    private readonly ctx: QuickJSContext,
    private readonly env: SandboxEnvironment,
  ) {
    const json = ctx.getProp(ctx.global, 'JSON');
    this.stringify = ctx.getProp(json, 'stringify');
    this.parse = ctx.getProp(json, 'parse');
    const object = ctx.getProp(ctx.global, 'Object');
    const prototype = ctx.getProp(object, 'prototype');
    this.toStringTag = ctx.getProp(prototype, 'toString');
    this.toText = ctx.getProp(ctx.global, 'String');
    const fn = ctx.getProp(ctx.global, 'Function');
    const fnPrototype = ctx.getProp(fn, 'prototype');
    this.functionSource = ctx.getProp(fnPrototype, 'toString');
    const freeze = ctx.getProp(object, 'freeze');
    this.install(freeze);
    for (const handle of [json, object, prototype, fn, fnPrototype, freeze]) handle.dispose();
  }

  /** Why the bound run must end now, if it must. */
  get stopped(): Verdict | null {
    return this.state?.stopped ?? null;
  }

  get pendingCalls(): number {
    return this.state?.pending.size ?? 0;
  }

  /** Starts serving `run`. */
  bind(run: ApiRun): void {
    if (this.state) throw new Error('The sandbox is serving another run.');
    this.state = new RunState(run);
  }

  /** Stops host work: requests in flight are cancelled and their answers ignored. */
  end(): void {
    if (!this.state) return;
    this.state.ended = true;
    this.state.cancel?.abort();
  }

  /**
   * Forgets the run, once the sandbox's memory is put back: its handles point into memory that no
   * longer holds them, so they are dropped, never freed.
   */
  reset(): void {
    this.end();
    this.state = null;
  }

  /** The source text of a function, read with the original `Function.prototype.toString`; null for anything else. */
  sourceOf(value: QuickJSHandle): string | null {
    if (this.ctx.typeof(value) !== 'function') return null;
    const result = this.ctx.callFunction(this.functionSource, value);
    if (result.error) {
      result.error.dispose();
      return null;
    }
    const text = this.ctx.typeof(result.value) === 'string' ? this.ctx.getString(result.value) : null;
    result.value.dispose();
    return text;
  }

  /** Defines the globals `Context` and `console`, frozen. */
  private install(freeze: QuickJSHandle): void {
    const ctx = this.ctx;
    const context = ctx.newObject();
    this.define(context, 'GetRequestEntity', (state) => this.getRequestEntity(state));
    this.define(context, 'SetResponseEntity', (state, value) => this.setResponseEntity(state, value));
    this.define(context, 'RaiseError', (state, title, message) => this.raiseError(state, title, message));
    this.define(context, 'Log', (state, ...args) => this.log(state, 'info', args));
    this.define(context, 'SetProgress', (state, percent, message) => this.setProgress(state, percent, message));
    this.define(context, 'ReadFile', (state, id, options) => this.readFile(state, id, options));
    const http = ctx.newObject();
    this.define(http, 'Request', (state, request) => this.request(state, request));
    ctx.setProp(context, 'Http', http);
    const console = ctx.newObject();
    const log = ctx.getProp(context, 'Log');
    for (const name of ['log', 'info', 'debug', 'warn']) ctx.setProp(console, name, log);
    log.dispose();
    this.define(console, 'error', (state, ...args) => this.log(state, 'error', args));
    for (const target of [http, context, console]) ctx.unwrapResult(ctx.callFunction(freeze, ctx.undefined, target)).dispose();
    ctx.setProp(ctx.global, 'Context', context);
    ctx.setProp(ctx.global, 'console', console);
    for (const handle of [http, context, console]) handle.dispose();
  }

  /** `{"body": ResponseBody}` as JSON, or undefined when the connector never touched an entity. */
  collect(maxBytes: number): string | undefined {
    const state = this.state;
    const source = state?.response ?? (state?.entityLoaded ? state.entity : undefined);
    if (source === undefined) return undefined;
    const ctx = this.ctx;
    // Handles made here live until the sandbox is reset, which drops them with the rest of the run.
    const wrapper = ctx.newObject();
    if (source !== null) {
      const body = ctx.getProp(source, 'ResponseBody'); // may run a getter: the interrupt handler still guards it
      ctx.setProp(wrapper, 'body', body);
      body.dispose();
    }
    const result = ctx.callFunction(this.stringify, ctx.undefined, wrapper);
    if (result.error) {
      const { message } = this.describe(result.error);
      throw new CollectError(message);
    }
    const text = result.value;
    if (ctx.typeof(text) !== 'string') throw new CollectError('it is not JSON data.');
    // Checked before the text is copied out: a UTF-8 byte is at least one UTF-16 unit.
    if (ctx.getNumber(ctx.getProp(text, 'length')) > maxBytes) throw new ResponseTooLarge();
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

  /** A host function that serves the bound run; before it is bound, and once the run must end, it throws. */
  private define(target: QuickJSHandle, name: string, fn: (state: RunState, ...args: QuickJSHandle[]) => HostResult): void {
    const handle = this.ctx.newFunction(name, (...args) => {
      const state = this.state;
      if (state?.stopped) return { error: this.ctx.newError('The run is ending.') };
      if (!state) return { error: this.ctx.newError('Context is not available before the connector runs.') };
      return fn(state, ...args);
    });
    this.ctx.setProp(target, name, handle);
    handle.dispose();
  }

  /** Ends the run with `verdict`: the code is stopped at its next check, whatever it catches. */
  private stop(state: RunState, verdict: Verdict, thrown: string): { error: QuickJSHandle } {
    state.stopped ??= verdict;
    return { error: this.ctx.newError(thrown) };
  }

  private getRequestEntity(state: RunState): HostResult {
    const ctx = this.ctx;
    if (!state.entityLoaded) {
      const entity = state.run.input.entity;
      if (entity !== null && entity !== undefined) {
        const text = ctx.newString(JSON.stringify(entity));
        const parsed = ctx.callFunction(this.parse, ctx.undefined, text);
        text.dispose();
        if (parsed.error) return parsed;
        state.entity = parsed.value;
      }
      state.entityLoaded = true;
    }
    return state.entity ? state.entity.dup() : ctx.null;
  }

  private setResponseEntity(state: RunState, value: QuickJSHandle | undefined): HostResult {
    const ctx = this.ctx;
    const kind = value === undefined ? 'undefined' : ctx.typeof(value);
    const tag = value && kind === 'object' ? this.tag(value) : null;
    if (!value || kind !== 'object' || tag === '[object Null]' || tag === '[object Array]') {
      const got = tag === '[object Null]' ? 'null' : tag === '[object Array]' ? 'an array' : kind;
      return { error: ctx.newError({ name: 'TypeError', message: `Context.SetResponseEntity expects the entity object, not ${got}.` }) };
    }
    state.response?.dispose();
    state.response = value.dup();
  }

  private raiseError(state: RunState, title: QuickJSHandle | undefined, message: QuickJSHandle | undefined): HostResult {
    const raised = { title: title ? this.show(title) : '', message: message ? this.show(message) : '' };
    // Thrown to stop the statements that follow; the interrupt handler then ends the run even if
    // the connector catches this.
    return this.stop(state, { kind: 'raised', ...raised }, `Context.RaiseError: ${raised.title}`);
  }

  private log(state: RunState, level: 'info' | 'error', args: QuickJSHandle[]): HostResult {
    const max = state.run.input.limits.logBytes;
    let text = '';
    for (const arg of args) {
      text += (text ? ' ' : '') + this.show(arg);
      if (text.length > max) break;
    }
    if (!state.run.logs.add(level, text.length > max ? text.slice(0, max + 1) : text)) {
      const verdict = logLimitVerdict(max);
      return this.stop(state, verdict, verdict.message);
    }
  }

  private setProgress(state: RunState, percent: QuickJSHandle | undefined, message: QuickJSHandle | undefined): HostResult {
    const ctx = this.ctx;
    const value = percent === undefined ? NaN : ctx.getNumber(percent);
    if (!Number.isFinite(value)) {
      return { error: ctx.newError({ name: 'TypeError', message: 'Context.SetProgress expects a percentage between 0 and 100.' }) };
    }
    const progress: Progress = { percent: Math.min(100, Math.max(0, value)) };
    if (message !== undefined && !['undefined', 'null'].includes(this.typeOf(message))) progress.message = this.show(message).slice(0, 1000);
    try {
      state.run.input.onProgress?.(progress);
    } catch {
      // A failing progress listener is the host's problem, never the connector's.
    }
  }

  /** `Context.Http.Request(request)`: a promise settled when the host request ends. */
  private request(state: RunState, request: QuickJSHandle | undefined): HostResult {
    const call = this.hostCall(state);
    if ('error' in call) return call;
    const { deferred, promise, refuse } = call;
    const json = request === undefined ? undefined : this.json(request);
    if (json === undefined) return refuse('Context.Http.Request expects an object like { method, url, headers, body }.');
    state.pending.add(deferred);
    performHttpRequest(JSON.parse(json), state.run.input.allowedHosts, this.env.http, (state.cancel ??= new AbortController()).signal).then(
      (response) => this.settle(state, deferred, () => this.parseJson(JSON.stringify(response))),
      (error: unknown) => this.settle(state, deferred, error instanceof ConnectorHttpError ? error.message : 'The HTTP request failed.'),
    );
    return promise;
  }

  /**
   * `Context.ReadFile(id, {offset, length, encoding})`: a promise of a file's bytes, as UTF-8 text,
   * base64 text or an ArrayBuffer. Only files of this run's own request can be read, at most
   * `maxReadFileBytes` per call; larger files are read in ranges.
   */
  private readFile(state: RunState, id: QuickJSHandle | undefined, options: QuickJSHandle | undefined): HostResult {
    const ctx = this.ctx;
    const call = this.hostCall(state);
    if ('error' in call) return call;
    const { deferred, promise, refuse } = call;
    if (!id || ctx.typeof(id) !== 'string') return refuse('Context.ReadFile expects the Id of a file of RequestFiles.');
    const fileId = ctx.getString(id);
    const cap = this.env.maxReadFileBytes;
    let parsed: ReadFileOptions;
    try {
      const json = options === undefined || ['undefined', 'null'].includes(this.typeOf(options)) ? '{}' : this.json(options);
      parsed = parseReadFileOptions(json === undefined ? undefined : JSON.parse(json), cap);
    } catch (error) {
      return refuse(error instanceof ReadFileRefused ? error.message : 'Context.ReadFile options could not be read.');
    }
    const reader = state.run.input.readFile;
    if (!reader) return refuse(`No file with Id '${fileId.slice(0, 100)}' was uploaded with this request.`);
    const { offset, length, encoding } = parsed;
    state.pending.add(deferred);
    // Without a length, one byte more than the cap tells a file that does not fit from one that does.
    reader(fileId, { offset, length: length ?? cap + 1 }).then(
      (bytes) => {
        if (length === undefined && bytes.byteLength > cap) {
          return this.settle(state, deferred, `The file is larger than ${formatBytes(cap)} from offset ${offset}: read it in parts with { offset, length } (at most ${formatBytes(cap)} per call).`);
        }
        const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        this.settle(state, deferred, () => ({
          value:
            encoding === 'bytes'
              ? ctx.newArrayBuffer(buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength))
              : ctx.newString(buffer.toString(encoding)),
        }));
      },
      (error: unknown) => this.settle(state, deferred, error instanceof Error ? error.message : 'The file could not be read.'),
    );
    return promise;
  }

  /** A promise for a host call; one call more than the run's pendingCalls limit ends the run. */
  private hostCall(state: RunState): { deferred: QuickJSDeferredPromise; promise: QuickJSHandle; refuse: (message: string) => QuickJSHandle } | { error: QuickJSHandle } {
    const max = state.run.input.limits.pendingCalls;
    if (state.pending.size >= max) {
      const verdict = pendingCallsVerdict(max);
      return this.stop(state, verdict, verdict.message);
    }
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
    return { deferred, promise, refuse };
  }

  private parseJson(text: string): VmCallResult<QuickJSHandle> {
    const textHandle = this.ctx.newString(text);
    const parsed = this.ctx.callFunction(this.parse, this.ctx.undefined, textHandle);
    textHandle.dispose();
    return parsed;
  }

  /** Settles a host call with the value `make` builds in the sandbox, or rejects it with a message; nothing once its run ended. */
  private settle(state: RunState, deferred: QuickJSDeferredPromise, outcome: (() => VmCallResult<QuickJSHandle>) | string): void {
    if (state.ended || !state.pending.delete(deferred)) return;
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
    state.run.onHostSettled();
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
