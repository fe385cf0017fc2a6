/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) as it travels between processes: in bus
 * messages, and on outgoing HTTP calls as the headers of the same names. Plain text, so the domain
 * and the adapters that carry it need no tracing library.
 */
export interface TraceContext {
  /** `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`. */
  traceparent: string;
  /** Vendor entries, passed on as received. */
  tracestate?: string;
}

/** Version 00 as the recommendation writes it; an all-zero trace or parent id is invalid. */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The recommendation's limit: 32 list members of at most 256 characters, with separators. */
export const MAX_TRACESTATE_LENGTH = 512;

export const isTraceparent = (value: unknown): value is string => typeof value === 'string' && TRACEPARENT.test(value);

export const isTracestate = (value: unknown): value is string => typeof value === 'string' && value.length <= MAX_TRACESTATE_LENGTH && /^[\x20-\x7e]*$/.test(value);
