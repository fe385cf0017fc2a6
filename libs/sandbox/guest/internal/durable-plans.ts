/**
 * What passes between the durable calls' two sides (`Context.Step`, `Sleep`, `SleepUntil`,
 * `WaitForEvent`): the sandbox side (guest/durable.ts) runs the connector's functions and waits;
 * the host side (src/durable/run-journal.ts) counts occurrences, reads and writes the journal and
 * decides what each call does next. Plans cross as text, never as an object a connector's
 * `Object.prototype.then` could intercept: an answer (the plan of every step a replay meets) as its
 * JSON after ANSWER, so a large result is not encoded twice; any other plan as JSON text.
 */

/** The first character of an answer's text; what follows is its JSON, none for `undefined`. */
export const ANSWER = '=';

/** What a durable call does next. */
export type DurablePlan =
  /** Resolve with the JSON (`undefined` for null): a result, an event's payload, a sleep's end. */
  | { do: 'answer'; json: string | null }
  /** Throw: the error a step ended with (`own`: the very error its last attempt threw), or a journal write refused. */
  | { do: 'throw'; name: string; message: string; own?: boolean }
  /** Run attempt `attempt` of step `id`, then tell the host how it went (`stepEnded`). */
  | { do: 'run'; id: number; key: string; attempt: number; timeout: StepTimeout | null; maxResultBytes: number }
  /** Wait `ms` in the sandbox, then ask again (`waited`). */
  | { do: 'wait'; id: number; ms: number }
  /** The run ends (it suspends, or its code no longer matches its journal): the call never settles. */
  | { do: 'halt' };

/** An attempt's time limit, with the message its TimeoutError carries. */
export interface StepTimeout {
  ms: number;
  message: string;
}

/**
 * How an attempt went, as the sandbox tells it: the arguments of `stepEnded` after the step's id
 * (plain values: no object to encode as JSON on the way).
 */
export type StepOutcome =
  /** It returned: the result as JSON text, null for `undefined`. */
  | [kind: 'result', json: string | null]
  /** It returned a value whose JSON is longer than the limit (in characters, which are at least as many as its bytes). */
  | [kind: 'tooLarge', chars: number]
  /** It returned a value that is not JSON data: why. */
  | [kind: 'notJson', why: string]
  /** It threw (or timed out); `retryable` is false for a NonRetryableError. */
  | [kind: 'error', name: string, message: string, retryable: boolean];
