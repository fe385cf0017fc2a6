import { isSpanContextValid, trace } from '@opentelemetry/api';
import pino from 'pino';
import type { DestinationStream, Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  /** Where lines go: standard output, in batches (`batchedOutput`), unless given (tests read them from a stream of their own). */
  destination?: DestinationStream;
}

/** A line waits at most this long before it is written (or until BATCH_BYTES have gathered). */
export const BATCH_MS = 50;
const BATCH_BYTES = 4096;
/** Lines at this level (warn) and above are written at once, with every line before them. */
const AT_ONCE_LEVEL = 40;

type FlushableDestination = DestinationStream & { flushSync(): void };

/**
 * A file descriptor written in batches: a write is a system call that wakes whoever reads the other end,
 * and one per line (the access line of every request) cost a caller at a time about a tenth of its
 * latency. Lines gather up to 4 KiB or 50 ms; the rest is written when the process exits, and a line
 * at warn or above goes out at once (see createLogger), so what explains a failure is never held back.
 * A process killed outright (SIGKILL) loses at most the last 50 ms of info and debug lines.
 */
export function batchedOutput(fd: number): ReturnType<typeof pino.destination> {
  const stream = pino.destination({ dest: fd, sync: true, minLength: BATCH_BYTES, periodicFlush: BATCH_MS });
  let closed = false;
  stream.once('close', () => (closed = true));
  // A stream closed before the exit (a test's) has nothing left to write.
  process.once('exit', () => closed || stream.flushSync());
  return stream;
}

/** Standard output, one batched stream for every logger of the process. */
let standardOutput: FlushableDestination | undefined;

const canFlush = (destination: DestinationStream): destination is FlushableDestination => typeof (destination as Partial<FlushableDestination>).flushSync === 'function';

/** Where credentials might appear in a logged object; each is replaced by `[redacted]`. */
const REDACTED_PATHS = [
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  'headers.cookie',
  '*.token',
  'token',
  'adminToken',
  'secret',
  '*.password',
  'password',
];

/**
 * The trace and span of the work a line is written in (`trace_id`, `span_id`, `trace_flags`, the names
 * of OpenTelemetry's log data model), so a line leads to its trace; nothing while tracing is off, when
 * no span is ever active.
 */
function traceFields(): object {
  // A new object each time: pino merges the line's own fields into it.
  const span = trace.getActiveSpan();
  if (!span) return {};
  const context = span.spanContext();
  if (!isSpanContextValid(context)) return {};
  return { trace_id: context.traceId, span_id: context.spanId, trace_flags: context.traceFlags.toString(16).padStart(2, '0') };
}

/**
 * JSON logs, one object a line, written in batches (see batchedOutput) except from warn up. Credentials
 * are redacted wherever they might appear in a logged object.
 * Fields every line of the process carries belong in this one place, as a pino `mixin`.
 */
export function createLogger(level: string, name: string, options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? (standardOutput ??= batchedOutput(1));
  const hooks = {
    logMethod(this: Logger, args: Parameters<Logger['info']>, write: (...args: Parameters<Logger['info']>) => void, lineLevel: number) {
      write.apply(this, args);
      if (lineLevel >= AT_ONCE_LEVEL && canFlush(destination)) destination.flushSync();
    },
  };
  return pino({ name, level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, mixin: traceFields, hooks }, destination);
}
