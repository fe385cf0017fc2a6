import { createHash, timingSafeEqual } from 'node:crypto';
import { GiError } from '@gi/domain';

export const REALM = 'generic-integration';

/**
 * Why a credential was refused, for metrics and logs (never in the reply beyond its detail text): a bot
 * token's reasons, then those of an integration's inbound scheme (docs/inbound.md).
 */
export type AuthFailureReason =
  | 'missing'
  | 'malformed'
  | 'invalid'
  | 'expired'
  | 'revoked'
  | 'other_bot'
  | 'missing_signature'
  | 'bad_signature'
  | 'timestamp_outside_tolerance'
  | 'unknown_key';

/** A 401 or 403 with the reason it was refused. */
export class AuthRefusal extends GiError {
  constructor(
    code: 'unauthorized' | 'forbidden' | 'missing_signature' | 'bad_signature' | 'timestamp_outside_tolerance' | 'unknown_key',
    title: string,
    detail: string,
    readonly reason: AuthFailureReason,
    headers: Record<string, string>,
  ) {
    super(code, title, detail, { headers });
  }
}

/** 401 with the RFC 6750 challenge: no error code when no credentials were sent, invalid_token otherwise. */
export function unauthorized(detail: string, reason: AuthFailureReason): AuthRefusal {
  const challenge =
    reason !== 'missing' ? `Bearer realm="${REALM}", error="invalid_token", error_description="${detail.replace(/["\\]/g, '')}"` : `Bearer realm="${REALM}"`;
  return new AuthRefusal('unauthorized', 'Unauthorized', detail, reason, { 'WWW-Authenticate': challenge });
}

/** Extracts the token of an `Authorization: Bearer <token>` header. */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header === '') throw unauthorized('A bearer token is required (Authorization: Bearer <token>).', 'missing');
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  if (!match) throw unauthorized('The Authorization header must be "Bearer <token>".', 'malformed');
  return match[1];
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Checks the admin token in constant time. */
export function verifyAdminBearer(header: string | undefined, adminToken: string): void {
  const token = bearerToken(header);
  if (!timingSafeEqual(digest(token), digest(adminToken))) throw unauthorized('The admin token is not valid.', 'invalid');
}
