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

/**
 * The `Context` API (and `console`) of one sandbox, built from host functions: nothing is compiled,
 * and no host object ever becomes reachable from connector code. Values cross the boundary as JSON
 * text, converted by the sandbox's own `JSON`, captured before any connector code exists.
 *
 * It is installed while the sandbox is prepared and serves exactly one run, bound when that run
 * starts; until then every function throws, so code that runs early can reach nothing.
 */
export class ContextApi {
  /** Why the run must end now (RaiseError, or a limit passed); the interrupt handler then stops the code. */
  stopped: Verdict | null = null;
  private run: ApiRun | null = null;
  private readonly owned: QuickJSHandle[] = [];
  private readonly pending = new Set<QuickJSDeferredPromise>();
  /** Made for the first host request only: creating and aborting a controller is not free. */
  private cancel: AbortController | null = null;
  private readonly stringify: QuickJSHandle;
  private readonly parse: QuickJSHandle;
  private readonly toStringTag: QuickJSHandle;
  private readonly toText: QuickJSHandle;
  private readonly functionSource: QuickJSHandle;
  private entity: QuickJSHandle | null = null;
  private entityLoaded = false;
  private response: QuickJSHandle | null = null;
  private ended = false;

  constructor(
    private readonly ctx: QuickJSContext,
    private readonly env: SandboxEnvironment,
  ) {
    const json = this.own(ctx.getProp(ctx.global, 'JSON'));
    this.stringify = this.own(ctx.getProp(json, 'stringify'));
    this.parse = this.own(ctx.getProp(json, 'parse'));
    const object = this.own(ctx.getProp(ctx.global, 'Object'));
    this.toStringTag = this.own(ctx.getProp(this.own(ctx.getProp(object, 'prototype')), 'toString'));
    this.toText = this.own(ctx.getProp(ctx.global, 'String'));
    const fn = this.own(ctx.getProp(ctx.global, 'Function'));
    this.functionSource = this.own(ctx.getProp(this.own(ctx.getProp(fn, 'prototype')), 'toString'));
    this.install(this.own(ctx.getProp(object, 'freeze')));
  }

  get pendingCalls(): number {
    return this.pending.size;
  }

  /** Starts serving `run`; a sandbox serves one run only. */
  bind(run: ApiRun): void {
    if (this.run) throw new Error('A sandbox serves one run only.');
    this.run = run;
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
    const context = this.own(ctx.newObject());
    this.define(context, 'GetRequestEntity', (run) => this.getRequestEntity(run));
    this.define(context, 'SetResponseEntity', (_run, value) => this.setResponseEntity(value));
    this.define(context, 'RaiseError', (_run, title, message) => this.raiseError(title, message));
    const log = this.define(context, 'Log', (run, ...args) => this.log(run, 'info', args));
    this.define(context, 'SetProgress', (run, percent, message) => this.setProgress(run, percent, message));
    this.define(context, 'ReadFile', (run, id, options) => this.readFile(run, id, options));
    const http = this.own(ctx.newObject());
    this.define(http, 'Request', (run, request) => this.request(run, request));
    ctx.setProp(context, 'Http', http);
    const console = this.own(ctx.newObject());
    for (const name of ['log', 'info', 'debug', 'warn']) ctx.setProp(console, name, log);
    this.define(console, 'error', (run, ...args) => this.log(run, 'error', args));
    for (const target of [http, context, console]) this.own(ctx.unwrapResult(ctx.callFunction(freeze, ctx.undefined, target)));
    ctx.setProp(ctx.global, 'Context', context);
    ctx.setProp(ctx.global, 'console', console);
  }

  /** `{"body": ResponseBody}` as JSON, or undefined when the connector never touched an entity. */
  collect(maxBytes: number): string | undefined {
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
    // Checked before the text is copied out: a UTF-8 byte is at least one UTF-16 unit.
    if (ctx.getNumber(this.own(ctx.getProp(text, 'length'))) > maxBytes) throw new ResponseTooLarge();
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

  /** Stops host work: requests in flight are cancelled and their answers ignored. */
  end(): void {
    this.ended = true;
    this.cancel?.abort();
  }

  /** Frees every handle this API holds. */
  dispose(): void {
    this.end();
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

  /** A host function that serves the bound run; before it is bound, and once the run must end, it throws. */
  private define(target: QuickJSHandle, name: string, fn: (run: ApiRun, ...args: QuickJSHandle[]) => HostResult): QuickJSHandle {
    const handle = this.own(
      this.ctx.newFunction(name, (...args) => {
        if (this.stopped) return { error: this.ctx.newError('The run is ending.') };
        if (!this.run) return { error: this.ctx.newError('Context is not available before the connector runs.') };
        return fn(this.run, ...args);
      }),
    );
    this.ctx.setProp(target, name, handle);
    return handle;
  }

  /** Ends the run with `verdict`: the code is stopped at its next check, whatever it catches. */
  private stop(verdict: Verdict, thrown: string): { error: QuickJSHandle } {
    this.stopped ??= verdict;
    return { error: this.ctx.newError(thrown) };
  }

  private getRequestEntity(run: ApiRun): HostResult {
    const ctx = this.ctx;
    if (!this.entityLoaded) {
      const entity = run.input.entity;
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
    const raised = { title: title ? this.show(title) : '', message: message ? this.show(message) : '' };
    // Thrown to stop the statements that follow; the interrupt handler then ends the run even if
    // the connector catches this.
    return this.stop({ kind: 'raised', ...raised }, `Context.RaiseError: ${raised.title}`);
  }

  private log(run: ApiRun, level: 'info' | 'error', args: QuickJSHandle[]): HostResult {
    const max = run.input.limits.logBytes;
    let text = '';
    for (const arg of args) {
      text += (text ? ' ' : '') + this.show(arg);
      if (text.length > max) break;
    }
    if (!run.logs.add(level, text.length > max ? text.slice(0, max + 1) : text)) {
      const verdict = logLimitVerdict(max);
      return this.stop(verdict, verdict.message);
    }
  }

  private setProgress(run: ApiRun, percent: QuickJSHandle | undefined, message: QuickJSHandle | undefined): HostResult {
    const ctx = this.ctx;
    const value = percent === undefined ? NaN : ctx.getNumber(percent);
    if (!Number.isFinite(value)) {
      return { error: ctx.newError({ name: 'TypeError', message: 'Context.SetProgress expects a percentage between 0 and 100.' }) };
    }
    const progress: Progress = { percent: Math.min(100, Math.max(0, value)) };
    if (message !== undefined && !['undefined', 'null'].includes(this.typeOf(message))) progress.message = this.show(message).slice(0, 1000);
    try {
      run.input.onProgress?.(progress);
    } catch {
      // A failing progress listener is the host's problem, never the connector's.
    }
  }

  /** `Context.Http.Request(request)`: a promise settled when the host request ends. */
  private request(run: ApiRun, request: QuickJSHandle | undefined): HostResult {
    const call = this.hostCall(run);
    if ('error' in call) return call;
    const { deferred, promise, refuse } = call;
    const json = request === undefined ? undefined : this.json(request);
    if (json === undefined) return refuse('Context.Http.Request expects an object like { method, url, headers, body }.');
    this.pending.add(deferred);
    performHttpRequest(JSON.parse(json), run.input.allowedHosts, this.env.http, (this.cancel ??= new AbortController()).signal).then(
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
  private readFile(run: ApiRun, id: QuickJSHandle | undefined, options: QuickJSHandle | undefined): HostResult {
    const ctx = this.ctx;
    const call = this.hostCall(run);
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
    const reader = run.input.readFile;
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

  /** A promise for a host call; one call more than the run's pendingCalls limit ends the run. */
  private hostCall(run: ApiRun): { deferred: QuickJSDeferredPromise; promise: QuickJSHandle; refuse: (message: string) => QuickJSHandle } | { error: QuickJSHandle } {
    const max = run.input.limits.pendingCalls;
    if (this.pending.size >= max) {
      const verdict = pendingCallsVerdict(max);
      return this.stop(verdict, verdict.message);
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
    this.run?.onHostSettled();
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
