/**
 * A URL fit for a log line: its password (`amqp://user:secret@host`) and the values of query parameters
 * that carry credentials are replaced by `[redacted]`. Text that is not a URL is redacted whole, since
 * it cannot be told apart from a secret.
 */
export function redactUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return '[redacted]';
  }
  if (url.password) url.password = MARK;
  for (const name of [...url.searchParams.keys()]) if (CREDENTIAL_PARAM.test(name)) url.searchParams.set(name, MARK);
  return url.toString().replaceAll(MARK, '[redacted]');
}

/** Stands in for a secret until the URL is text again (the URL class would escape the brackets). */
const MARK = '__redacted__';
const CREDENTIAL_PARAM = /pass|secret|token|key|credential|auth(?!source|mechanism)/i;
