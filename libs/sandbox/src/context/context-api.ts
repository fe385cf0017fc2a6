import { rawBodySpan, SecretFilter, type Progress } from '@gi/domain';
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle, VmCallResult } from 'quickjs-emscripten';
import { GlobalsBridge } from '../host/globals-bridge';
import type { TimerQueue } from '../host/timer-queue';
import { performHttpRequest, type HostHttpResponse } from '../http/connector-http';
import { HttpExchangeError, httpCallerOf } from '../http/http-exchange';
import { ProgressGate } from '../run/progress-gate';
import { RUN_BUDGET } from '../run/run-budget';
import { failureVerdict, limitVerdict, logLimitVerdict, logLinesVerdict, pendingCallsVerdict, type Verdict } from '../run/run-verdict';
import { formatBytes, type SandboxEnvironment } from '../sandbox-options';
import { CUT_MARK, GuestValues } from './guest-values';
import { bodyObjectMembers, LAZY_BODY_CHARS, LAZY_BODY_SOURCE } from './lazy-request-body';
import { encodeRawBody, rawBodyEncoding, RawBodyRefused } from './raw-request-body';
import { parseReadFileOptions, ReadFileRefused, type ReadFileEncoding, type ReadFileOptions } from './read-file-options';
import { RunState, type ApiRun } from './run-state';

type HostResult = QuickJSHandle | VmCallResult<QuickJSHandle> | void;

/** The ResponseBody JSON is larger than the limit. */
export class ResponseTooLarge extends Error {}
/** Reading the ResponseBody failed inside the sandbox (a throwing getter, a cycle, a BigInt...). */
export class CollectError extends Error {}

/**
 * The `Context` API (and `console`) of one sandbox, built from host functions (compiled: only the
 * helper that reads a large RequestBody lazily, lazy-request-body.ts), and no host object ever
 * becomes reachable from connector code. Values cross the boundary as JSON text (`GuestValues`); what
 * the API holds for the run it serves is its `RunState`.
 *
 * It is installed while the sandbox is prepared, before its memory image is taken, and serves one
 * run at a time: bound when a run starts, dropped with everything it made for the run when the
 * sandbox is reset. Until a run is bound every function throws, so code that runs early can reach
 * nothing.
 */
export class ContextApi {
  private state: RunState | null = null;
  /** Values in and out of this sandbox, the bound run's secrets redacted from texts. */
  readonly values: GuestValues;
  /** The connector globals beyond Context and console (timers, URL, fetch, crypto, Intl...). */
  readonly globals: GlobalsBridge;
  /** Makes an entity's RequestBody lazy (LAZY_BODY_SOURCE); held, with the host functions it calls, for the sandbox's life. */
  private readonly lazyRequestBody: QuickJSHandle;

  constructor(
    private readonly ctx: QuickJSContext,
    private readonly env: SandboxEnvironment,
  ) {
    const values = (this.values = new GuestValues(ctx, () => this.state?.run.secrets ?? NO_SECRETS));
    this.lazyRequestBody = this.installLazyBody();
    const installed = this.install();
    // The core module of globals gives Context the members other modules make (Context.Step...): frozen after it.
    this.globals = new GlobalsBridge(ctx, {
      bound: () => {
        const state = this.state;
        if (state?.stopped) return { error: ctx.newError('The run is ending.') };
        if (!state) return { error: ctx.newError('This is not available before the connector runs.') };
        return { run: state };
      },
      promise: (run, work, metered) => this.promise(run as RunState, work, metered),
      uncaught: (run, error, where) => {
        const { message, stack } = values.describe(error);
        const verdict = failureVerdict(`Uncaught error in ${where}: ${message}`, stack, run.input.limits);
        return this.stop(run as RunState, verdict, verdict.kind === 'failed' ? verdict.message : message);
      },
      exceeded: (run, message) => this.stop(run as RunState, limitVerdict(message), message),
      parseJson: (text) => values.parseJson(text),
      json: (value) => values.json(value, RUN_BUDGET.hostArgumentChars),
      tag: (value) => values.tag(value),
    });
    for (const target of installed) {
      ctx.unwrapResult(values.freeze(target)).dispose();
      target.dispose();
    }
  }

  /** Why the bound run must end now, if it must. */
  get stopped(): Verdict | null {
    return this.state?.stopped ?? null;
  }

  get pendingCalls(): number {
    return this.state?.pending.size ?? 0;
  }

  /** The bound run has nothing to compute: its durable calls may suspend it now (see RunJournal). */
  idle(): void {
    this.state?.idle?.();
  }

  /** CPU time the host spent for the bound run off the engine's thread (crypto work). */
  get hostCpuMs(): number {
    return this.state?.hostCpuMs ?? 0;
  }

  /** Starts serving `run`. */
  bind(run: ApiRun): void {
    if (this.state) throw new Error('The sandbox is serving another run.');
    this.state = new RunState(run, this.env);
  }

  /**
   * Stops host work: requests in flight are cancelled and their answers ignored, calls waiting for
   * their turn never start, and the last progress update still held back is delivered.
   */
  end(): void {
    this.state?.end();
  }

  /**
   * Forgets the run, once the sandbox's memory is put back: its handles point into memory that no
   * longer holds them, so they are dropped, never freed.
   */
  reset(): void {
    this.end();
    this.state = null;
  }

  /** Defines the globals `Context` and `console`: the objects to freeze once the globals modules are installed. */
  private install(): QuickJSHandle[] {
    const ctx = this.ctx;
    const context = ctx.newObject();
    this.define(context, 'GetRequestEntity', (state) => this.getRequestEntity(state));
    this.define(context, 'GetRawRequestBody', (state, options) => this.getRawRequestBody(state, options));
    this.define(context, 'SetResponseEntity', (state, value) => this.setResponseEntity(state, value));
    this.define(context, 'RaiseError', (state, title, message) => this.raiseError(state, title, message));
    this.define(context, 'Log', (state, ...args) => this.log(state, 'info', args));
    this.define(context, 'SetProgress', (state, percent, message) => this.setProgress(state, percent, message));
    this.define(context, 'ReadFile', (state, id, options) => this.readFile(state, id, options));
    this.defineGetter(context, 'Secrets', (state) => this.getSecrets(state));
    this.defineGetter(context, 'InboundAuth', (state) => this.getInboundAuth(state));
    const http = ctx.newObject();
    this.define(http, 'Request', (state, request) => this.request(state, request));
    ctx.setProp(context, 'Http', http);
    const console = ctx.newObject();
    const log = ctx.getProp(context, 'Log');
    for (const name of ['log', 'info', 'debug', 'warn']) ctx.setProp(console, name, log);
    log.dispose();
    this.define(console, 'error', (state, ...args) => this.log(state, 'error', args));
    ctx.setProp(ctx.global, 'Context', context);
    ctx.setProp(ctx.global, 'console', console);
    return [http, context, console];
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
    const result = this.values.stringify(wrapper);
    if (result.error) {
      const { message } = this.values.describe(result.error);
      throw new CollectError(message);
    }
    const text = result.value;
    if (ctx.typeof(text) !== 'string') throw new CollectError('it is not JSON data.');
    // Checked before the text is copied out: a UTF-8 byte is at least one UTF-16 unit.
    if (ctx.getNumber(ctx.getProp(text, 'length')) > maxBytes) throw new ResponseTooLarge();
    return ctx.getString(text);
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

  /** A read-only property served like `define`'s functions (a getter: `Context` is frozen before any run). */
  private defineGetter(target: QuickJSHandle, name: string, fn: (state: RunState) => HostResult): void {
    const getter = (): HostResult => {
      const state = this.state;
      if (state?.stopped) return { error: this.ctx.newError('The run is ending.') };
      if (!state) return { error: this.ctx.newError('Context is not available before the connector runs.') };
      return fn(state);
    };
    // defineProp makes a host function of `get` (newFunction), which may answer an error as `define`'s do.
    this.ctx.defineProp(target, name, { get: getter as unknown as (this: QuickJSHandle) => QuickJSHandle, enumerable: true, configurable: false });
  }

  /** `Context.Secrets`: the run's secrets as a frozen plain object (the same one at every read). */
  private getSecrets(state: RunState): HostResult {
    if (!state.secrets) {
      const made = this.values.frozenJson(JSON.stringify(state.run.input.secrets ?? {}));
      if (made.error) return made;
      state.secrets = made.value;
    }
    return state.secrets.dup();
  }

  /**
   * `Context.InboundAuth`: how the call proved who sent it, as a frozen plain object (the same one at every
   * read): the integration's inbound scheme and the producer's delivery id, or `bearer` for a bot token.
   */
  private getInboundAuth(state: RunState): HostResult {
    if (!state.inboundAuth) {
      const made = this.values.frozenJson(JSON.stringify(state.run.input.inbound ?? { scheme: 'bearer', deliveryId: null }));
      if (made.error) return made;
      state.inboundAuth = made.value;
    }
    return state.inboundAuth.dup();
  }

  /** Ends the run with `verdict`: the code is stopped at its next check, whatever it catches. */
  private stop(state: RunState, verdict: Verdict, thrown: string): { error: QuickJSHandle } {
    state.stopped ??= verdict;
    return { error: this.ctx.newError(thrown) };
  }

  private getRequestEntity(state: RunState): HostResult {
    const ctx = this.ctx;
    if (!state.entityLoaded) {
      const { entityJson, rawBody } = state.run.input;
      if (entityJson !== 'null') {
        // A large JSON body that lies in the entity as sent is left out of the parse, and read when read.
        const span = rawBody !== null && rawBody.length >= LAZY_BODY_CHARS ? rawBodySpan(entityJson, rawBody) : null;
        const parsed = this.values.parseJson(span ? `${entityJson.slice(0, span[0])}null${entityJson.slice(span[1])}` : entityJson);
        if (parsed.error) return parsed;
        if (span) {
          const made = ctx.callFunction(this.lazyRequestBody, ctx.undefined, parsed.value);
          if (made.error) {
            parsed.value.dispose();
            return made;
          }
          made.value.dispose();
          state.lazyBody = rawBody;
        }
        state.entity = parsed.value;
      }
      state.entityLoaded = true;
    }
    return state.entity ? state.entity.dup() : ctx.null;
  }

  /**
   * The function that makes an entity's RequestBody lazy, and the two host functions it reads the
   * body with: its text, and its members as found by the host (null: parse the text whole).
   */
  private installLazyBody(): QuickJSHandle {
    const ctx = this.ctx;
    const served = (fn: (body: string, args: QuickJSHandle[]) => QuickJSHandle) => (...args: QuickJSHandle[]) => {
      const state = this.state;
      if (state?.stopped) return { error: ctx.newError('The run is ending.') };
      if (!state?.lazyBody) return { error: ctx.newError('The request body is not available.') };
      return fn(state.lazyBody, args);
    };
    // The whole text, or the slice [start, end) of it (a member's value); the helper alone calls this, but it checks what it gets.
    const text = ctx.newFunction(
      'bodyText',
      served((body, [start, end]) => {
        if (start === undefined) return ctx.newString(body);
        const from = ctx.typeof(start) === 'number' ? ctx.getNumber(start) : NaN;
        const to = end !== undefined && ctx.typeof(end) === 'number' ? ctx.getNumber(end) : NaN;
        if (!(Number.isInteger(from) && Number.isInteger(to) && from >= 0 && from <= to && to <= body.length)) return ctx.newString('');
        return ctx.newString(body.slice(from, to));
      }),
    );
    const members = ctx.newFunction(
      'bodyMembers',
      served((body) => {
        const found = bodyObjectMembers(body);
        return found === null ? ctx.null : ctx.newString(JSON.stringify(found));
      }),
    );
    const factory = ctx.unwrapResult(ctx.evalCode(LAZY_BODY_SOURCE, 'request-body.js'));
    const lazy = ctx.unwrapResult(ctx.callFunction(factory, ctx.undefined, text, members));
    for (const handle of [factory, text, members]) handle.dispose();
    return lazy;
  }

  /**
   * `Context.GetRawRequestBody(options)`: the body exactly as the caller sent it, as text (the
   * default), base64 text of its UTF-8 bytes, or those bytes as an ArrayBuffer; null when the request
   * had no single body (a file transfer).
   */
  private getRawRequestBody(state: RunState, options: QuickJSHandle | undefined): HostResult {
    const ctx = this.ctx;
    let encoding: ReadFileEncoding;
    try {
      const given = options !== undefined && !['undefined', 'null'].includes(this.values.typeOf(options));
      const json = given ? this.values.json(options, 10_000) : undefined;
      if (given && json === undefined) throw new RawBodyRefused('Context.GetRawRequestBody options must be an object like { encoding }.');
      encoding = rawBodyEncoding(json === undefined ? undefined : JSON.parse(json));
    } catch (error) {
      const message = error instanceof RawBodyRefused ? error.message : 'Context.GetRawRequestBody options could not be read.';
      return { error: ctx.newError({ name: 'TypeError', message }) };
    }
    const body = state.run.input.rawBody;
    if (body === null) return ctx.null;
    // Copied into the sandbox through a buffer as large as itself: a body over half the memory cannot fit.
    const { memoryBytes } = state.run.input.limits;
    const size = Buffer.byteLength(body);
    if (size > memoryBytes / 2) {
      return { error: ctx.newError({ name: 'RangeError', message: `The request body (${formatBytes(size)}) is larger than half the connector's memory limit of ${formatBytes(memoryBytes)} (limits.memoryMiB), so it cannot be read; raise the limit.` }) };
    }
    try {
      const value = encodeRawBody(body, encoding);
      return typeof value === 'string' ? ctx.newString(value) : ctx.newArrayBuffer(value);
    } catch {
      return { error: ctx.newError("The request body is too large for the connector's memory.") };
    }
  }

  private setResponseEntity(state: RunState, value: QuickJSHandle | undefined): HostResult {
    const ctx = this.ctx;
    const kind = value === undefined ? 'undefined' : ctx.typeof(value);
    const tag = value && kind === 'object' ? this.values.tag(value) : null;
    if (!value || kind !== 'object' || tag === '[object Null]' || tag === '[object Array]') {
      const got = tag === '[object Null]' ? 'null' : tag === '[object Array]' ? 'an array' : kind;
      return { error: ctx.newError({ name: 'TypeError', message: `Context.SetResponseEntity expects the entity object, not ${got}.` }) };
    }
    state.response?.dispose();
    state.response = value.dup();
  }

  private raiseError(state: RunState, title: QuickJSHandle | undefined, message: QuickJSHandle | undefined): HostResult {
    const { raisedTitleChars, raisedMessageChars } = RUN_BUDGET;
    const raised = {
      title: title ? this.values.shown(title, raisedTitleChars, CUT_MARK) : '',
      message: message ? this.values.shown(message, raisedMessageChars, CUT_MARK) : '',
    };
    // Thrown to stop the statements that follow; the interrupt handler then ends the run even if
    // the connector catches this.
    return this.stop(state, { kind: 'raised', ...raised }, `Context.RaiseError: ${raised.title}`);
  }

  private log(state: RunState, level: 'info' | 'error', args: QuickJSHandle[]): HostResult {
    const max = state.run.input.limits.logBytes;
    // No more than the log can hold is copied out of the sandbox (a UTF-8 byte is at least one UTF-16
    // unit), and the reach of the run's secrets past that, so one cut there is read whole (LogBuffer.add).
    const window = state.run.secrets.window(max);
    let text = '';
    for (const arg of args) {
      text += (text ? ' ' : '') + this.values.show(arg, window - text.length);
      if (text.length >= window) break;
    }
    const added = state.run.logs.add(level, text.slice(0, window));
    if (added !== 'kept') {
      const verdict = added === 'lines' ? logLinesVerdict(RUN_BUDGET.logLines) : logLimitVerdict(max);
      return this.stop(state, verdict, verdict.message);
    }
  }

  private setProgress(state: RunState, percent: QuickJSHandle | undefined, message: QuickJSHandle | undefined): HostResult {
    const ctx = this.ctx;
    const value = percent === undefined ? NaN : ctx.getNumber(percent);
    if (!Number.isFinite(value)) {
      return { error: ctx.newError({ name: 'TypeError', message: 'Context.SetProgress expects a percentage between 0 and 100.' }) };
    }
    const deliver = state.run.input.onProgress;
    if (!deliver) return;
    const gate = (state.progress ??= new ProgressGate(deliver, RUN_BUDGET.progressIntervalMs));
    const percentage = Math.min(100, Math.max(0, value));
    const max = RUN_BUDGET.progressMessageChars;
    const hasMessage = message !== undefined && !['undefined', 'null'].includes(this.values.typeOf(message));
    state.heldMessage?.dispose();
    state.heldMessage = null;
    // A text message held back is read only if it is still the latest when its update leaves: a loop
    // of updates copies one message a second out of the sandbox, not one per call. (Other values are
    // read now: turning them into text may run the connector's code, which belongs inside the run.)
    if (hasMessage && ctx.typeof(message) === 'string' && !gate.isDue()) {
      const held = (state.heldMessage = message.dup());
      return gate.offer(() => {
        const text = this.values.shown(held, max);
        held.dispose();
        if (state.heldMessage === held) state.heldMessage = null;
        return { percent: percentage, message: text };
      });
    }
    const progress: Progress = { percent: percentage };
    if (hasMessage) progress.message = this.values.shown(message, max);
    gate.offer(progress);
  }

  /** `Context.Http.Request(request)`: a promise settled when the host request ends. */
  private request(state: RunState, request: QuickJSHandle | undefined): HostResult {
    const call = this.hostCall(state);
    if ('error' in call) return call;
    const { deferred, promise, refuse } = call;
    const max = RUN_BUDGET.httpRequestBytes;
    const json = request === undefined ? undefined : this.values.json(request, max + 1);
    if (json === undefined) return refuse('Context.Http.Request expects an object like { method, url, headers, body }.');
    if (json.length > max || Buffer.byteLength(json) > max) return refuse(`The request is larger than ${formatBytes(max)}, the most one Context.Http.Request may send.`);
    state.pending.add(deferred);
    performHttpRequest(JSON.parse(json), httpCallerOf(state)).then(
      (response) => this.settle(state, deferred, () => this.httpResponse(response)),
      (error: unknown) => this.settle(state, deferred, error instanceof HttpExchangeError ? error.message : 'The HTTP request failed.'),
    );
    return promise;
  }

  /** The response as the connector sees it; a JSON body is parsed here, inside the sandbox (and left out when it is not JSON after all). */
  private httpResponse({ isJson, ...response }: HostHttpResponse): VmCallResult<QuickJSHandle> {
    const made = this.values.parseJson(JSON.stringify(response));
    if (made.error || !isJson) return made;
    const json = this.values.parseJson(response.body);
    if (json.error) json.error.dispose();
    else {
      this.ctx.setProp(made.value, 'json', json.value);
      json.value.dispose();
    }
    return made;
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
      const json = options === undefined || ['undefined', 'null'].includes(this.values.typeOf(options)) ? '{}' : this.values.json(options, 10_000);
      parsed = parseReadFileOptions(json === undefined ? undefined : JSON.parse(json), cap);
    } catch (error) {
      return refuse(error instanceof ReadFileRefused ? error.message : 'Context.ReadFile options could not be read.');
    }
    const reader = state.run.input.readFile;
    if (!reader) return refuse(`No file with Id '${fileId.slice(0, 100)}' was uploaded with this request.`);
    const { offset, length, encoding } = parsed;
    state.pending.add(deferred);
    // Without a length, one byte more than the cap tells a file that does not fit from one that does.
    state.inTurn(() => reader(fileId, { offset, length: length ?? cap + 1 }).then(
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
    ));
    return promise;
  }

  /** The bound run's timers. */
  get timers(): TimerQueue | null {
    return this.state?.timers ?? null;
  }

  /** A promise settled by host work, counted as a call in flight (against `pendingCalls` when `metered`). */
  private promise(state: RunState, work: Promise<() => VmCallResult<QuickJSHandle>>, metered = true): HostResult {
    const call = this.hostCall(state, metered);
    if ('error' in call) return call;
    state.pending.add(call.deferred);
    if (!metered) state.unmetered.add(call.deferred);
    work.then((make) => this.settle(state, call.deferred, make));
    return call.promise;
  }

  /** A promise for a host call; one metered call more than the run's pendingCalls limit ends the run. */
  private hostCall(state: RunState, metered = true): { deferred: QuickJSDeferredPromise; promise: QuickJSHandle; refuse: (message: string) => QuickJSHandle } | { error: QuickJSHandle } {
    const max = state.run.input.limits.pendingCalls;
    if (metered && state.pending.size - state.unmetered.size >= max) {
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

  /** Settles a host call with the value `make` builds in the sandbox, or rejects it with a message; nothing once its run ended. */
  private settle(state: RunState, deferred: QuickJSDeferredPromise, outcome: (() => VmCallResult<QuickJSHandle>) | string): void {
    if (state.ended || !state.pending.delete(deferred)) return;
    state.unmetered.delete(deferred);
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
}

/** Redacts nothing: texts read while no run is bound. */
const NO_SECRETS = new SecretFilter(undefined);
