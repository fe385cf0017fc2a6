import type { ConnectorRunResult, Progress } from '@gi/domain';
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten';
import sjson from 'secure-json-parse';
import { CONNECTOR_FILENAME, locateInStack, wrapConnector } from './connector-source';
import { CONTEXT_PRELUDE, PRELUDE_FILENAME } from './context-prelude';
import { LogBuffer } from './log-buffer';
import { formatBytes, type SandboxLimits } from './sandbox-options';

/** What one run needs: the request without its cache key (the engine has no use for it). */
export interface RunInput {
  code: string;
  entity: unknown;
  timeoutMs: number;
  onProgress?: (progress: Progress) => void;
}

/** Jobs run between checks of the deadline and of the connector's promise. */
const JOB_BATCH = 256;

type Ending =
  | { kind: 'fulfilled' }
  | { kind: 'rejected'; message: string; stack: string }
  | { kind: 'syntax'; message: string; stack: string }
  | { kind: 'stalled' };

/**
 * Runs one connector in a fresh QuickJS runtime and context, so nothing of one run is visible to the
 * next. The deadline is enforced inside the engine by the interrupt handler; values cross the
 * boundary only as JSON text.
 */
export async function runConnector(module: QuickJSWASMModule, limits: SandboxLimits, input: RunInput): Promise<RunOutcome> {
  const started = performance.now();
  const run = new ConnectorRun(module, limits, input);
  let verdict: Verdict;
  try {
    verdict = await run.execute();
  } catch (error) {
    run.dispose();
    throw error;
  }
  const result = { ...verdict, logs: run.logs.toArray(), durationMs: performance.now() - started } as ConnectorRunResult;
  // The verdict stands even when freeing the engine fails: QuickJS can lose track of an object when
  // it is interrupted at an unlucky point, and then refuses to free the runtime. The caller replaces
  // the damaged module; the connector's result is not affected.
  let damaged = false;
  try {
    run.dispose();
  } catch {
    damaged = true;
  }
  return { result, damaged };
}

export interface RunOutcome {
  result: ConnectorRunResult;
  /** True when the engine could not be freed cleanly and its module must not be used again. */
  damaged: boolean;
}

type Verdict =
  | { kind: 'ok'; responseBody: unknown }
  | { kind: 'raised'; title: string; message: string }
  | { kind: 'failed'; reason: 'threw' | 'timeout' | 'limit'; message: string };

class ConnectorRun {
  readonly logs: LogBuffer;
  private readonly runtime: QuickJSRuntime;
  private readonly context: QuickJSContext;
  private readonly handles: QuickJSHandle[] = [];
  private readonly deadline: number;
  private raised: { title: string; message: string } | null = null;
  private timedOut = false;
  private api: QuickJSHandle | null = null;

  constructor(
    module: QuickJSWASMModule,
    private readonly limits: SandboxLimits,
    private readonly input: RunInput,
  ) {
    this.logs = new LogBuffer(limits.maxLogBytes);
    this.deadline = Date.now() + input.timeoutMs;
    this.runtime = module.newRuntime();
    this.runtime.setMemoryLimit(limits.memoryLimitBytes);
    this.runtime.setMaxStackSize(limits.maxStackBytes);
    // Called by the engine every few thousand operations: a raised error or a passed deadline stops
    // the code with an error that no try/catch inside the sandbox can catch.
    this.runtime.setInterruptHandler(() => {
      if (this.raised) return true;
      if (Date.now() >= this.deadline) this.timedOut = true;
      return this.timedOut;
    });
    this.context = this.runtime.newContext();
  }

  async execute(): Promise<Verdict> {
    this.api = this.installContext();
    const ending = await this.start();
    return this.judge(ending);
  }

  dispose(): void {
    for (const handle of this.handles.reverse()) if (handle.alive) handle.dispose();
    this.handles.length = 0;
    if (this.context.alive) this.context.dispose();
    if (this.runtime.alive) this.runtime.dispose();
  }

  private keep(handle: QuickJSHandle): QuickJSHandle {
    this.handles.push(handle);
    return handle;
  }

  /** Defines `Context` and `console`; returns the prelude's `{collect, describe}` object. */
  private installContext(): QuickJSHandle {
    const ctx = this.context;
    const host = this.keep(ctx.newObject());
    this.hostFunction(host, 'log', (level, text) => {
      this.logs.add(ctx.getString(level) === 'error' ? 'error' : 'info', ctx.getString(text));
    });
    this.hostFunction(host, 'progress', (percent, message) => this.reportProgress(ctx.getNumber(percent), message));
    this.hostFunction(host, 'raise', (title, message) => {
      this.raised ??= { title: ctx.getString(title), message: ctx.getString(message) };
    });
    const entityJson = this.input.entity === null || this.input.entity === undefined
      ? ctx.null
      : this.keep(ctx.newString(JSON.stringify(this.input.entity)));
    const prelude = this.keep(ctx.unwrapResult(ctx.evalCode(CONTEXT_PRELUDE, PRELUDE_FILENAME, { strict: true })));
    const maxLogChars = this.keep(ctx.newNumber(this.limits.maxLogBytes));
    return this.keep(ctx.unwrapResult(ctx.callFunction(prelude, ctx.undefined, host, entityJson, maxLogChars)));
  }

  private hostFunction(target: QuickJSHandle, name: string, fn: (...args: QuickJSHandle[]) => void): void {
    const ctx = this.context;
    const handle = ctx.newFunction(name, (...args) => {
      fn(...args);
    });
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

  /** Compiles and calls the connector, then runs its jobs until its promise settles or it cannot. */
  private async start(): Promise<Ending> {
    const ctx = this.context;
    const compiled = ctx.evalCode(wrapConnector(this.input.code), CONNECTOR_FILENAME);
    if (compiled.error) return { kind: 'syntax', ...this.describe(this.keep(compiled.error)) };
    const fn = this.keep(compiled.value);
    if (ctx.typeof(fn) !== 'function') return { kind: 'syntax', message: 'SyntaxError: the connector code ends its function body early (an unmatched "}").', stack: '' };
    const called = ctx.callFunction(fn, ctx.undefined);
    if (called.error) return { kind: 'rejected', ...this.describe(this.keep(called.error)) };
    const promise = this.keep(called.value);
    for (;;) {
      const jobs = this.runtime.executePendingJobs(JOB_BATCH);
      if (jobs.error) {
        // Only errors no code can catch escape a job: an interrupt (deadline, RaiseError) or the engine giving up.
        return { kind: 'rejected', ...this.describe(this.keep(jobs.error)) };
      }
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
      if (!this.runtime.hasPendingJob()) return { kind: 'stalled' };
    }
  }

  /** `{message, stack}` of a thrown value, read by the prelude inside the sandbox. */
  private describe(error: QuickJSHandle): { message: string; stack: string } {
    const fallback = { message: 'Error: the connector failed with an error that cannot be described.', stack: '' };
    if (this.raised || this.timedOut || !this.api) return fallback;
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

  private judge(ending: Ending): Verdict {
    const verdict = this.verdictOf(ending);
    if (verdict.kind === 'failed') this.logs.addSystem('error', verdict.message);
    if (verdict.kind === 'raised') this.logs.addSystem('error', `RaiseError: ${verdict.title}: ${verdict.message}`);
    return verdict;
  }

  private verdictOf(ending: Ending): Verdict {
    if (this.raised) return { kind: 'raised', ...this.raised };
    if (this.timedOut) return this.timeout();
    switch (ending.kind) {
      case 'syntax':
      case 'rejected':
        return failure(ending.message, ending.stack, this.limits);
      case 'stalled':
        return {
          kind: 'failed',
          reason: 'timeout',
          message: 'The connector waits on a promise that can never settle (nothing is left that could resolve it), so it cannot finish.',
        };
      case 'fulfilled':
        return this.response();
    }
  }

  private timeout(): Verdict {
    return { kind: 'failed', reason: 'timeout', message: `The connector did not finish within its time limit of ${this.input.timeoutMs} ms.` };
  }

  /** The ResponseBody of the entity given to SetResponseEntity, else of the request entity. */
  private response(): Verdict {
    let text: string | undefined;
    try {
      text = this.callApi('collect');
    } catch (error) {
      if (this.raised) return { kind: 'raised', ...this.raised };
      if (this.timedOut) return this.timeout();
      if (error instanceof ResponseTooLarge) return this.tooLarge();
      if (error instanceof CollectError) return failure(`The ResponseBody cannot be sent: ${error.message}`, '', this.limits);
      throw error;
    }
    if (text === undefined) return { kind: 'ok', responseBody: responseBodyOf(this.input.entity) };
    if (Buffer.byteLength(text) > this.limits.maxResponseBytes) return this.tooLarge();
    // Keys like __proto__ are dropped so a returned object cannot pollute prototypes on the host.
    const parsed = sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' }) as { body?: unknown };
    return { kind: 'ok', responseBody: parsed.body };
  }

  private tooLarge(): Verdict {
    return {
      kind: 'failed',
      reason: 'limit',
      message: `The ResponseBody is larger than the limit of ${formatBytes(this.limits.maxResponseBytes)}.`,
    };
  }
}

class ResponseTooLarge extends Error {}
class CollectError extends Error {}

const responseBodyOf = (entity: unknown) =>
  entity !== null && typeof entity === 'object' ? (entity as { ResponseBody?: unknown }).ResponseBody : undefined;

/** A thrown error as a run result: engine limits are told apart from the connector's own errors. */
function failure(message: string, stack: string, limits: SandboxLimits): Verdict {
  if (/^InternalError: out of memory/.test(message)) {
    return { kind: 'failed', reason: 'limit', message: `The connector used more than its memory limit of ${formatBytes(limits.memoryLimitBytes)}.` };
  }
  if (/^\w*Error: stack overflow/.test(message)) {
    return { kind: 'failed', reason: 'limit', message: 'The connector nested calls too deeply (stack overflow).' };
  }
  const at = locateInStack(stack);
  return { kind: 'failed', reason: 'threw', message: at ? `${message} (line ${at.line}, column ${at.column})` : message };
}
