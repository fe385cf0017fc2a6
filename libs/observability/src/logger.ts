import pino from 'pino';
import type { Logger } from 'pino';

export type { Logger };

/** JSON logs. Credentials are redacted wherever they might appear in a logged object. */
export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: ['*.authorization', '*.Authorization', 'headers.authorization', 'headers.cookie', '*.token', 'token', 'adminToken', 'secret'],
      censor: '[redacted]',
    },
  });
}
