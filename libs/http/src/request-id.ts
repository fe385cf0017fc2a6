import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** What a caller's `X-Request-Id` may be: 1 to 128 visible ASCII characters of a token, a UUID or base64. */
const ACCEPTED = /^[A-Za-z0-9._~:/+=@-]{1,128}$/;

/** The caller's request id when it is one we accept (length, charset), else a new UUID. */
export function requestIdOf(sent: string | string[] | undefined): string {
  return typeof sent === 'string' && ACCEPTED.test(sent) ? sent : randomUUID();
}
