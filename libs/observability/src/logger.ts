import pino from 'pino';
import type { DestinationStream, Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  /** Where lines go: stdout unless given (tests read them from a stream of their own). */
  destination?: DestinationStream;
}

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
 * JSON logs, one object a line. Credentials are redacted wherever they might appear in a logged object.
 * Fields every line of the process should carry (a trace and span id, say) belong in this one place, as a
 * pino `mixin`.
 */
export function createLogger(level: string, name: string, options: LoggerOptions = {}): Logger {
  const settings = { name, level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
