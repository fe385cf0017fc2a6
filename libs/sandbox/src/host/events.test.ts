import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';
import { caught, sameFunctionOnBothSides } from './globals.fixture';

/** Scenarios run in Node and in a connector; each returns a log of what it saw. */
const SCENARIOS: Record<string, string> = {
  'listeners: order, duplicates, once, removal, handleEvent objects, null': `() => {
    const log = [];
    const t = new EventTarget();
    function a(e) { log.push(['a', e.type, e.eventPhase, e.target === t, e.currentTarget === t, this === t]); }
    const object = { handleEvent(e) { log.push(['object', this === object, e.type]); } };
    t.addEventListener('x', a);
    t.addEventListener('x', a);
    t.addEventListener('x', () => log.push('once'), { once: true });
    t.addEventListener('x', object);
    t.addEventListener('x', null);
    t.addEventListener('y', a);
    const first = t.dispatchEvent(new Event('x'));
    t.removeEventListener('x', a);
    t.removeEventListener('x', a);
    const event = new Event('x');
    t.dispatchEvent(event);
    return [log, first, event.eventPhase, event.currentTarget, event.target === t, ${caught('t.addEventListener("x")')}, ${caught('t.addEventListener("x", 5)')}, ${caught('t.dispatchEvent({ type: "x" })')}];
  }`,
  'stopImmediatePropagation, preventDefault, returnValue, cancelBubble during a dispatch': `() => {
    const log = [];
    const t = new EventTarget();
    t.addEventListener('x', (e) => { e.preventDefault(); log.push(['prevented', e.defaultPrevented, e.returnValue]); });
    t.addEventListener('x', (e) => { e.stopImmediatePropagation(); log.push(['stop', e.cancelBubble]); });
    t.addEventListener('x', () => log.push('never'));
    const cancelable = new Event('x', { cancelable: true });
    const plain = new Event('x');
    const results = [t.dispatchEvent(cancelable), t.dispatchEvent(plain)];
    return [log, results, cancelable.defaultPrevented, plain.defaultPrevented];
  }`,
  'Event and CustomEvent: init dictionaries, constants, the legacy init methods': `() => {
    const e = new Event('x', { bubbles: 1, cancelable: '', composed: {} });
    const c = new CustomEvent('c', { detail: { n: 1 } });
    const d = new CustomEvent('d');
    const i = new Event('i'); i.initEvent('j', true, true);
    return [e.type, e.bubbles, e.cancelable, e.composed, e.isTrusted, e.eventPhase, typeof e.timeStamp, c.detail, d.detail, c instanceof Event, i.type, i.bubbles, i.cancelable,
      Event.NONE, Event.CAPTURING_PHASE, Event.AT_TARGET, Event.BUBBLING_PHASE, Object.prototype.toString.call(e), Object.prototype.toString.call(c), Object.prototype.toString.call(new EventTarget()),
      ${caught('new Event()')}, ${caught('new Event("x", 5)')}];
  }`,
  'AbortController and AbortSignal: reasons, the abort event, throwIfAborted, onabort': `() => {
    const log = [];
    const controller = new AbortController();
    const { signal } = controller;
    signal.addEventListener('abort', (e) => log.push(['listener', e.type, e.isTrusted, e.target === signal, signal.aborted]));
    signal.onabort = (e) => log.push(['onabort', e.type]);
    const before = [signal.aborted, signal.reason, ${caught('signal.throwIfAborted()')}];
    controller.abort();
    controller.abort('again');
    const reason = signal.reason;
    const custom = new AbortController(); custom.abort({ why: 'mine' });
    const stat = AbortSignal.abort();
    return [before, log, reason instanceof DOMException, reason.name, reason.message, reason.code, ${caught('signal.throwIfAborted()')}, custom.signal.reason, stat.aborted, stat.reason.name,
      AbortSignal.abort(7).reason, ${caught('new AbortSignal()')}, Object.prototype.toString.call(signal), Object.prototype.toString.call(controller), signal instanceof EventTarget, typeof signal.onabort];
  }`,
  'the signal option removes a listener when its signal aborts': `() => {
    const log = [];
    const t = new EventTarget();
    const controller = new AbortController();
    t.addEventListener('x', () => log.push('with signal'), { signal: controller.signal });
    t.addEventListener('x', () => log.push('aborted already'), { signal: AbortSignal.abort() });
    t.dispatchEvent(new Event('x'));
    controller.abort();
    t.dispatchEvent(new Event('x'));
    return [log, ${caught('t.addEventListener("x", () => {}, { signal: null })')}, ${caught('t.addEventListener("x", () => {}, { signal: {} })')}];
  }`,
  'AbortSignal.any follows its signals, and the signals they follow': `() => {
    const log = [];
    const a = new AbortController(), b = new AbortController();
    const any = AbortSignal.any([a.signal, b.signal]);
    const nested = AbortSignal.any([any]);
    any.addEventListener('abort', () => log.push(['any', any.reason]));
    nested.addEventListener('abort', () => log.push(['nested', nested.reason]));
    a.signal.addEventListener('abort', () => log.push(['a', any.aborted]));
    b.abort('b first');
    a.abort('a later');
    const early = AbortSignal.any([new AbortController().signal, AbortSignal.abort('early')]);
    return [log, any.reason, early.aborted, early.reason, AbortSignal.any([]).aborted, ${caught('AbortSignal.any([{}])')}, ${caught('AbortSignal.any(5)')}, ${caught('AbortSignal.any()')}];
  }`,
  'AbortSignal.timeout aborts with a TimeoutError once its delay passed': `async () => {
    const signal = AbortSignal.timeout(10);
    const before = signal.aborted;
    await new Promise((resolve) => signal.addEventListener('abort', resolve));
    return [before, signal.aborted, signal.reason.name, signal.reason.message, signal.reason.code, ${caught('AbortSignal.timeout()')}];
  }`,
};

describe('Event, EventTarget, AbortController and AbortSignal', () => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers: 0 });
  });
  afterAll(() => runtime.close());
  const { run, inSandbox, inNode } = sameFunctionOnBothSides(() => runtime, 'events');

  it.each(Object.entries(SCENARIOS))('behave as in Node: %s', async (_name, fn) => {
    expect(await inSandbox(fn)).toEqual(await inNode(fn));
  });

  // Node 20 differs from the standard (and from browsers, Deno and Workers) on each of these.
  it.each([
    [
      'capture listeners first, a dispatch within the same dispatch refused, the path',
      `() => {
        const log = [];
        const t = new EventTarget();
        const event = new Event('x');
        t.addEventListener('x', (e) => { log.push('bubble', e.composedPath().length); try { t.dispatchEvent(event); } catch (error) { log.push(error.name); } });
        t.addEventListener('x', () => log.push('capture'), { capture: true });
        t.dispatchEvent(event);
        return [log, event.composedPath()];
      }`,
      [['capture', 'bubble', 1, 'InvalidStateError'], []],
    ],
    [
      'a dispatch calls the listeners there were when it began',
      `() => {
        const log = [];
        const t = new EventTarget();
        const late = () => log.push('late');
        const removed = () => log.push('removed');
        t.addEventListener('x', () => { log.push('first'); t.addEventListener('x', late); t.removeEventListener('x', removed); });
        t.addEventListener('x', removed);
        t.dispatchEvent(new Event('x'));
        t.dispatchEvent(new Event('x'));
        return log;
      }`,
      ['first', 'first', 'late'],
    ],
    [
      'preventDefault has no effect in a passive listener; returnValue = false cancels; the propagation flags are cleared after a dispatch',
      `() => {
        const t = new EventTarget();
        let inside;
        t.addEventListener('x', (e) => { e.preventDefault(); inside = e.defaultPrevented; e.stopPropagation(); }, { passive: true });
        const event = new Event('x', { cancelable: true });
        const result = t.dispatchEvent(event);
        const e = new Event('y', { cancelable: true }); e.returnValue = false;
        return [inside, result, event.defaultPrevented, event.cancelBubble, e.defaultPrevented];
      }`,
      [false, true, false, false, true],
    ],
    ['isTrusted is an own property of each event ([LegacyUnforgeable]); the constants are on the prototype too', `() => [Object.getOwnPropertyNames(new Event('x')), new Event('x').AT_TARGET]`, [['isTrusted'], 2]],
    [
      'a signal that follows another is aborted before any abort event fires',
      `() => { const a = new AbortController(); const any = AbortSignal.any([a.signal]); const nested = AbortSignal.any([any]); let seen; any.onabort = () => { seen = nested.aborted; }; a.abort(); return seen; }`,
      true,
    ],
    [
      'AbortSignal.timeout takes an [EnforceRange] unsigned long long: a TypeError out of range',
      `() => [${['AbortSignal.timeout(-1)', 'AbortSignal.timeout(NaN)', 'AbortSignal.timeout(Infinity)', 'AbortSignal.timeout(2 ** 53)'].map(caught).join(', ')}]`,
      Array(4).fill({ error: 'TypeError' }),
    ],
  ])('behave as the standard says, where Node 20 differs: %s', async (_name, fn, expected) => {
    expect(await inSandbox(fn as string)).toEqual(expected);
  });

  it('end the run Failed with an error a listener throws, as an error in a timer callback does', async () => {
    const result = await run(`const t = new EventTarget(); t.addEventListener('x', () => { throw new TypeError('boom'); }); try { t.dispatchEvent(new Event('x')); } catch (e) {} Context.SetResponseEntity({ ResponseBody: 'went on' });`);
    expect(result).toMatchObject({ kind: 'failed', reason: 'threw', message: expect.stringMatching(/^Uncaught error in an "x" event listener: TypeError: boom/) });
  });

  it('end the run Failed with an error an abort listener of AbortSignal.timeout throws', async () => {
    const result = await run(`const s = AbortSignal.timeout(5); s.onabort = () => { throw new Error('late boom'); }; await new Promise((r) => setTimeout(r, 100));`);
    expect(result).toMatchObject({ kind: 'failed', reason: 'threw', message: expect.stringMatching(/^Uncaught error in an "abort" event listener: Error: late boom/) });
  });

  it('end the run Failed with what reportError reports', async () => {
    const result = await run(`reportError(new RangeError('reported')); Context.SetResponseEntity({ ResponseBody: 'went on' });`);
    expect(result).toMatchObject({ kind: 'failed', reason: 'threw', message: expect.stringMatching(/^Uncaught error in reportError: RangeError: reported/) });
  });

  it('never let an AbortSignal.timeout fire into a later run, and no clearTimeout cancels it', async () => {
    const code = `
      if (Context.GetRequestEntity().RequestBody.first) { AbortSignal.timeout(1000).onabort = () => Context.Log('late'); return; }
      for (let id = -20; id <= 20; id++) clearTimeout(id);
      const signal = AbortSignal.timeout(20);
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      await new Promise((resolve) => setTimeout(resolve, 1100));
      Context.SetResponseEntity({ ResponseBody: signal.reason.name });`;
    const entity = (first: boolean) => ({ RequestParams: '', RequestHeaders: '', RequestBody: { first }, ResponseBody: null });
    const first = await runtime.run({ cacheKey: 'bot/timeout-leak@1', code, entity: entity(true), timeoutMs: 2000, allowedHosts: [] });
    const second = await runtime.run({ cacheKey: 'bot/timeout-leak@1', code, entity: entity(false), timeoutMs: 2000, allowedHosts: [] });
    expect(first).toMatchObject({ kind: 'ok' });
    // The first run ended when its code did, without waiting for its timeout.
    expect(first.durationMs).toBeLessThan(500);
    expect(second).toMatchObject({ kind: 'ok', responseBody: 'TimeoutError' });
    expect([...first.logs, ...second.logs].map((line) => line.message)).not.toContain('late');
  });

  it('count the wait for AbortSignal.timeout as wall time: past the deadline the run ends at the deadline', async () => {
    const started = Date.now();
    const result = await run(`const s = AbortSignal.timeout(60000); await new Promise((r) => s.addEventListener('abort', r));`, { timeoutMs: 300 });
    expect(result).toMatchObject({ kind: 'failed', reason: 'timeout' });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('end the run when it sets more timeouts than a run may have timers', async () => {
    const result = await run(`for (;;) AbortSignal.timeout(100000);`);
    expect(result).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/more than 10000 timers/) });
  });

  it('keep working when the connector replaces the methods they use, and the next run finds them intact', async () => {
    const code = `
      const intact = EventTarget.prototype.dispatchEvent.name === 'dispatchEvent';
      const broken = () => { throw new Error('tampered'); };
      const log = [];
      const controller = new AbortController();
      controller.signal.addEventListener('abort', (e) => { log[log.length] = e.type; });
      EventTarget.prototype.dispatchEvent = EventTarget.prototype.addEventListener = Array.prototype.push = Set.prototype.forEach = Function.prototype.call = Function.prototype.apply = broken;
      Array.prototype[Symbol.iterator] = broken;
      globalThis.DOMException = broken;
      controller.abort();
      const reason = controller.signal.reason;
      Context.SetResponseEntity({ ResponseBody: [intact, log.length, reason.name, reason.message] });`;
    for (let i = 0; i < 2; i++) {
      expect(await runtime.run({ cacheKey: 'bot/events-tamper@1', code, entity: null, timeoutMs: 2000, allowedHosts: [] })).toMatchObject({
        kind: 'ok',
        responseBody: [true, 1, 'AbortError', 'This operation was aborted'],
      });
    }
  });
});

describe('AbortSignal on a worker thread', () => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers: 1 });
  });
  afterAll(() => runtime.close());
  const { run, inSandbox, inNode } = sameFunctionOnBothSides(() => runtime, 'events-worker');

  it('times out and follows other signals as in Node', async () => {
    const fn = `async () => { const any = AbortSignal.any([AbortSignal.timeout(10), new AbortController().signal]); await new Promise((r) => any.onabort = r); return [any.reason.name, any.reason.message]; }`;
    expect(await inSandbox(fn)).toEqual(await inNode(fn));
  });

  it('ends the run Failed with an error a listener throws', async () => {
    const result = await run(`const c = new AbortController(); c.signal.onabort = () => { throw new Error('worker boom'); }; c.abort();`);
    expect(result).toMatchObject({ kind: 'failed', reason: 'threw', message: expect.stringMatching(/^Uncaught error in an "abort" event listener: Error: worker boom/) });
  });
});
