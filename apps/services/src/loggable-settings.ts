import type { ServiceConfig } from '@gi/config';
import { redactUrl } from '@gi/observability';

/** Settings that are credentials as a whole: logged as `[redacted]` when set. */
const SECRET_NAME = /TOKEN|SECRET|PASSWORD/;

/**
 * The settings of a process as its start line shows them: every one, with credentials redacted (tokens
 * and secrets whole, the password and credential parameters of URLs such as AMQP_URL and STORE_URL).
 */
export function loggableSettings(config: ServiceConfig): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(config)) {
    if (value === undefined) continue;
    if (SECRET_NAME.test(name)) shown[name] = '[redacted]';
    else if (typeof value === 'string' && /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) shown[name] = redactUrl(value);
    else shown[name] = value;
  }
  return shown;
}
