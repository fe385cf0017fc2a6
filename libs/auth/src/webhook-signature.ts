import { createHmac, randomBytes } from 'node:crypto';

/**
 * Signing callbacks the Standard Webhooks way (standardwebhooks.com): a bot's secret is `whsec_` and the
 * base64 of 32 random bytes; each delivery carries `webhook-id`, `webhook-timestamp` (Unix seconds) and
 * `webhook-signature`: `v1,` and the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>` keyed with the
 * secret's bytes, one per valid secret (separated by spaces) while a rotation overlaps.
 */
const PREFIX = 'whsec_';

export function newSigningSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

export function signatureOf(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The signing headers of one delivery attempt. */
export function webhookHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => signatureOf(secret, id, timestamp, body)).join(' '),
  };
}
