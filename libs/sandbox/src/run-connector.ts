import type { ConnectorRunResult, Progress } from '@gi/domain';
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten';
import sjson from 'secure-json-parse';
import { ConnectorHttpError, performHttpRequest } from './connector-http';
import { CONNECTOR_FILENAME, wrapConnector } from './connector-source';
import { LogBuffer } from './log-buffer';
import type { PreparedSandbox } from './prepared-sandbox';
import type { SandboxEnvironment, SandboxLimits } from './sandbox-options';
import {
  failureVerdict,
  responseBodyOf,
  stalledVerdict,
  timeoutVerdict,
  tooLargeVerdict,
  withRunFacts,
  type Verdict,
} from './run-verdict';


/** What one run needs: the request without its cache key (the engine has no use for it). */
export interface RunInput {
  code: string;
  entity: unknown;
  timeoutMs: number;
  allowedHosts: readonly string[];
  onProgress?: (progress: Progress) => void;
}

export interface RunOutcome {
  result: ConnectorRunResult;
  /**
   * Frees the run's engine; false when QuickJS could not free it cleanly (it can lose track of an
   * object when interrupted at an unlucky point), and the module must then not be used again.
   * Separate from the result so the caller can reply first and clean up after.
   */
  release(): boolean;
}

/** Jobs run between checks of the deadline and of the connector's promise. */
const JOB_BATCH = 256;
/** Longest stretch of connector code before pending HTTP responses get a chance to arrive. */
const SLICE_MS = 20;

type Ending =
  | { kind: 'fulfilled' }
  | { kind: 'rejected'; message: string; stack: string }
  | { kind: 'stalled' };

/**
 * Runs one connector in a sandbox nobody used before, so nothing of one run is visible to the next.
 * The deadline is enforced inside the engine by the interrupt handler; values cross the boundary
 * only as JSON text.
 */
export async function runConnector(sandbox: PreparedSandbox, env: SandboxEnvironment, input: RunInput): Promise<RunOutcome> {
  const started = performance.now();
  const run = new ConnectorRun(sandbox, env, input);
  let verdict: Verdict;
  try {
    verdict = await run.execute();
  } catch (error) {
    run.end();
    release(sandbox);
    throw error;
  }
  run.end();
  return {
    result: withRunFacts(verdict, { logs: run.logs.toArray(), durationMs: performance.now() - started }),
    release: () => release(sandbox),
  };
}

function release(sandbox: PreparedSandbox): boolean {
  try {
    sandbox.dispose();
    return true;
  } catch {
    return false;
  }
}

class ConnectorRun {
  readonly logs: LogBuffer;
  private readonly runtime: QuickJSRuntime;
  private readonly context: QuickJSContext;
  private readonly limits: SandboxLimits;
  private readonly handles: QuickJSHandle[] = [];
  private readonly deadline: number;
  private readonly cancel = new AbortController();
  /** Resolve callbacks of HTTP requests still in flight, owned until the response arrives. */
  private readonly pending = new Set<QuickJSHandle>();
  private api: QuickJSHandle | null = null;
  private raised: { title: string; message: string } | null = null;
  private timedOut = false;
  private ended = false;
  private wake: (() => void) | null = null;

  constructor(
    sandbox: PreparedSandbox,
    private readonly env: SandboxEnvironment,
    private readonly input: RunInput,
  ) {
    this.runtime = sandbox.runtime;
    this.context = sandbox.context;
    this.limits = env.limits;
    this.logs = new LogBuffer(this.limits.maxLogBytes);
    this.deadline = Date.now() + input.timeoutMs;
    // Called by the engine every few thousand operations: a raised error or a passed deadline stops
    // the code with an error that no try/catch inside the sandbox can catch.
    this.runtime.setInterruptHandler(() => {
      if (this.raised) return true;
      if (Date.now() >= this.deadline) this.timedOut = true;
      return this.timedOut;
    });
    this.api = this.installContext(sandbox.prelude);
  }

  async execute(): Promise<Verdict> {
    const ending = await this.start();
    const verdict = this.verdictOf(ending);
    if (verdict.kind === 'failed') this.logs.addSystem('error', verdict.message);
    if (verdict.kind === 'raised') this.logs.addSystem('error', `RaiseError: ${verdict.title}: ${verdict.message}`);
    return verdict;
  }

  /** Stops host work and drops every handle, so the sandbox can be freed. */
  end(): void {
    this.ended = true;
    this.cancel.abort();
    for (const callback of this.pending) callback.dispose();
    this.pending.clear();
    for (const handle of this.handles.reverse()) if (handle.alive) handle.dispose();
    this.handles.length = 0;
    this.runtime.removeInterruptHandler();
  }

  private keep(handle: QuickJSHandle): QuickJSHandle {
    this.handles.push(handle);
    return handle;
  }

  /** Defines `Context` and `console`; returns the prelude's `{collect, describe}` object. */
  private installContext(prelude: QuickJSHandle): QuickJSHandle {
    const ctx = this.context;
    const host = this.keep(ctx.newObject());
    this.hostFunction(host, 'log', (level, text) => {
      this.logs.add(ctx.getString(level) === 'error' ? 'error' : 'info', ctx.getString(text));
    });
    this.hostFunction(host, 'progress', (percent, message) => this.reportProgress(ctx.getNumber(percent), message));
    this.hostFunction(host, 'raise', (title, message) => {
      this.raised ??= { title: ctx.getString(title), message: ctx.getString(message) };
    });
    this.hostFunction(host, 'http', (json, callback) => this.startHttp(ctx.getString(json), callback));
    const entity = this.input.entity;
    const entityJson = entity === null || entity === undefined ? ctx.null : this.keep(ctx.newString(JSON.stringify(entity)));
    const maxLogChars = this.keep(ctx.newNumber(this.limits.maxLogBytes));
    return this.keep(ctx.unwrapResult(ctx.callFunction(prelude, ctx.undefined, host, entityJson, maxLogChars)));
  }

  private hostFunction(target: QuickJSHandle, name: string, fn: (...args: QuickJSHandle[]) => QuickJSHandle | void): void {
    const ctx = this.context;
    const handle = ctx.newFunction(name, (...args) => fn(...args));
    ctx.setProp(target, name, handle);
    handle.dispose();
  }

  private reportProgress(percent: number, message: QuickJSHandle | undefined): void {
    const ctx = this.context;
    const progress: Progress = { percent: Math.min(100, Math.max(0, percent)) };
    if (message && ctx.typeof(message) === 'string') progress.message = ctx.getString(message);
    try {
      this.input.onProgress?.(progress);
    } catch {
      // A failing progress listener is the host's problem, never the connector's.
    }
  }

  /**
   * Starts a host HTTP request; `callback(ok, json)` is called inside the sandbox when it ends.
   * Returns a message (as a sandbox string) when the request is refused before it starts.
   */
  private startHttp(json: string, callback: QuickJSHandle): QuickJSHandle | void {
    const ctx = this.context;
    const max = this.env.http.maxPendingCalls;
    if (this.pending.size >= max) return ctx.newString(`Too many HTTP requests at once (at most ${max}): await some before starting more.`);
    let request: unknown;
    try {
      request = JSON.parse(json);
    } catch {
      return ctx.newString('Context.Http.Request expects an object like { method, url, headers, body }.');
    }
    const owned = callback.dup();
    this.pending.add(owned);
    performHttpRequest(request, this.input.allowedHosts, this.env.http, this.cancel.signal).then(
      (response) => this.settleHttp(owned, true, JSON.stringify(response)),
      (error: unknown) => this.settleHttp(owned, false, error instanceof ConnectorHttpError ? error.message : 'The HTTP request failed.'),
    );
  }

  private settleHttp(callback: QuickJSHandle, ok: boolean, text: string): void {
    if (this.ended || !this.pending.delete(callback)) return;
    const ctx = this.context;
    const textHandle = ctx.newString(text);
    const result = ctx.callFunction(callback, ctx.undefined, ok ? ctx.true : ctx.false, textHandle);
    textHandle.dispose();
    callback.dispose();
    if (result.error) this.keep(result.error);
    else result.value.dispose();
    this.wake?.();
  }

  /** Waits until a host request settles or the deadline passes. */
  private waitForHost(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(0, this.deadline - Date.now()));
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    }).then(() => {
      this.wake = null;
    });
  }

  /** Compiles and calls the connector, then runs its jobs until its promise settles or it cannot. */
  private async start(): Promise<Ending> {
    const ctx = this.context;
    const compiled = ctx.evalCode(wrapConnector(this.input.code), CONNECTOR_FILENAME);
    if (compiled.error) return { kind: 'rejected', ...this.describe(this.keep(compiled.error)) };
    const fn = this.keep(compiled.value);
    if (ctx.typeof(fn) !== 'function') {
      return { kind: 'rejected', message: 'SyntaxError: the connector code closes its function body early (an unmatched "}").', stack: '' };
    }
    const called = ctx.callFunction(fn, ctx.undefined);
    if (called.error) return { kind: 'rejected', ...this.describe(this.keep(called.error)) };
    const promise = this.keep(called.value);
    let slice = performance.now();
    for (;;) {
      const jobs = this.runtime.executePendingJobs(JOB_BATCH);
      // Only errors no code can catch escape a job: an interrupt (deadline, RaiseError) or the engine giving up.
      if (jobs.error) return { kind: 'rejected', ...this.describe(this.keep(jobs.error)) };
      const state = ctx.getPromiseState(promise);
      if (state.type === 'fulfilled') {
        if (!state.notAPromise) state.value.dispose();
        return { kind: 'fulfilled' };
      }
      if (state.type === 'rejected') return { kind: 'rejected', ...this.describe(this.keep(state.error)) };
      if (this.raised || this.timedOut) return { kind: 'stalled' };
      if (Date.now() >= this.deadline) {
        this.timedOut = true;
        return { kind: 'stalled' };
      }
      if (this.runtime.hasPendingJob()) {
        if (this.pending.size > 0 && performance.now() - slice > SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          slice = performance.now();
        }
        continue;
      }
      if (this.pending.size === 0) return { kind: 'stalled' };
      await this.waitForHost();
      slice = performance.now();
    }
  }

  /** `{message, stack}` of a thrown value, read by the prelude inside the sandbox. */
  private describe(error: QuickJSHandle): { message: string; stack: string } {
    const fallback = { message: 'Error: the connector failed with an error that cannot be described.', stack: '' };
    if (this.raised || this.timedOut) return fallback;
    try {
      const text = this.callApi('describe', error);
      if (text === undefined) return fallback;
      const parsed = JSON.parse(text) as { message?: unknown; stack?: unknown };
      return { message: String(parsed.message ?? fallback.message), stack: String(parsed.stack ?? '') };
    } catch {
      return fallback;
    }
  }

  /** Calls a prelude function; its result must be a string (or undefined), else the call failed. */
  private callApi(name: 'describe' | 'collect', ...args: QuickJSHandle[]): string | undefined {
    const ctx = this.context;
    const fn = this.keep(ctx.getProp(this.api as QuickJSHandle, name));
    const result = ctx.callFunction(fn, ctx.undefined, ...args);
    if (result.error) {
      this.keep(result.error);
      throw new CollectError(name === 'collect' ? this.describe(result.error).message : 'describe failed');
    }
    const value = this.keep(result.value);
    if (ctx.typeof(value) !== 'string') return undefined;
    const length = ctx.getNumber(this.keep(ctx.getProp(value, 'length')));
    if (name === 'collect' && length > this.limits.maxResponseBytes) throw new ResponseTooLarge();
    return ctx.getString(value);
  }

  private verdictOf(ending: Ending): Verdict {
    if (this.raised) return { kind: 'raised', ...this.raised };
    if (this.timedOut) return timeoutVerdict(this.input.timeoutMs);
    switch (ending.kind) {
      case 'rejected':
        return failureVerdict(ending.message, ending.stack, this.limits);
      case 'stalled':
        return stalledVerdict;
      case 'fulfilled':
        return this.response();
    }
  }

  /** The ResponseBody of the entity given to SetResponseEntity, else of the request entity. */
  private response(): Verdict {
    let text: string | undefined;
    try {
      text = this.callApi('collect');
    } catch (error) {
      if (this.raised) return { kind: 'raised', ...this.raised };
      if (this.timedOut) return timeoutVerdict(this.input.timeoutMs);
      if (error instanceof ResponseTooLarge) return tooLargeVerdict(this.limits);
      if (error instanceof CollectError) return failureVerdict(`The ResponseBody cannot be sent: ${error.message}`, '', this.limits);
      throw error;
    }
    if (text === undefined) return { kind: 'ok', responseBody: responseBodyOf(this.input.entity) };
    if (Buffer.byteLength(text) > this.limits.maxResponseBytes) return tooLargeVerdict(this.limits);
    // Keys like __proto__ are dropped so a returned object cannot pollute prototypes on the host.
    const parsed = sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' }) as { body?: unknown };
    return { kind: 'ok', responseBody: parsed.body };
  }
}

class ResponseTooLarge extends Error {}
class CollectError extends Error {}
