import type { ConnectorRunRequest, ConnectorRunResult } from '@gi/domain';
import fc from 'fast-check';
import type { QuickJsConnectorRuntime } from '../quickjs-connector.runtime';

/**
 * Running one function's source text both in a connector and in Node, to compare the sandbox's
 * globals with Node's own implementation of the same standard. The function takes one JSON input
 * (the request body) and returns JSON (the response body); each side runs the very same text.
 */
export function sameFunctionOnBothSides(runtime: () => QuickJsConnectorRuntime, prefix: string) {
  let key = 0;
  const run = (code: string, extra: Partial<ConnectorRunRequest> = {}): Promise<ConnectorRunResult> =>
    runtime().run({ cacheKey: `bot/${prefix}@${++key}`, code, entity: null, timeoutMs: 10_000, allowedHosts: [], ...extra });

  /** The function's result in a connector; the run's failure as an exception. */
  const inSandbox = async (fn: string, input: unknown = null, extra: Partial<ConnectorRunRequest> = {}): Promise<unknown> => {
    const result = await runtime().run({
      // One cache key per function: its sandboxes keep it compiled, whatever the input.
      cacheKey: `bot/${prefix}-fn@${hash(fn)}`,
      code: `Context.SetResponseEntity({ ResponseBody: await (${fn})(Context.GetRequestEntity().RequestBody) });`,
      entity: { RequestParams: '', RequestHeaders: '', RequestBody: input, ResponseBody: null },
      timeoutMs: 10_000,
      allowedHosts: [],
      ...extra,
    });
    if (result.kind !== 'ok') throw new Error(`The connector run failed: ${JSON.stringify(result)}`);
    return result.responseBody;
  };

  /** The function's result in Node, through JSON as the sandbox's travels. */
  const inNode = async (fn: string, input: unknown = null): Promise<unknown> => {
    const local = new Function(`return (${fn});`)() as (input: unknown) => unknown;
    return JSON.parse(JSON.stringify((await local(JSON.parse(JSON.stringify(input)))) ?? null));
  };

  return { run, inSandbox, inNode };
}

function hash(text: string): string {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  return (h >>> 0).toString(36);
}

/** Strings of any UTF-16 code units: lone surrogates, pairs, ASCII and the rest. */
export const anyString = (maxLength = 40) =>
  fc.string({
    unit: fc.oneof(
      fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
      fc.constantFrom('\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uFEFF', '€', '😀'),
    ),
    maxLength,
  });

/** A JavaScript expression for an error's name and message, for comparing what was thrown. */
export const caught = (expression: string) => `(() => { try { return { value: ${expression} }; } catch (e) { return { error: e.name }; } })()`;
