import type { InboundScheme } from '@gi/domain';
import { AuthRefusal, REALM } from '../bearer';

/** Why an inbound scheme refused a call: the problem's code, and the reason counted in gi_auth_failures_total. */
export type InboundRefusalCode = 'missing_signature' | 'bad_signature' | 'timestamp_outside_tolerance' | 'unknown_key';

const TITLES: Record<InboundRefusalCode, string> = {
  missing_signature: 'Missing signature',
  bad_signature: 'Bad signature',
  timestamp_outside_tolerance: 'Timestamp outside tolerance',
  unknown_key: 'Unknown key',
};

/**
 * The challenge of a 401 (RFC 9110 requires one): the scheme the integration expects, `Basic` for basic
 * auth, and `Bearer` too when it also takes a bot token.
 */
function challenge(scheme: InboundScheme, allowBearer: boolean): string {
  const own = scheme === 'basic' ? `Basic realm="${REALM}", charset="UTF-8"` : `Signature realm="${REALM}", scheme="${scheme}"`;
  return allowBearer ? `${own}, Bearer realm="${REALM}"` : own;
}

/**
 * A 401 of an inbound scheme: its `type` names the reason (urn:gi:problem:missing-signature, ...). The
 * detail says what was wrong in general terms (which header, which rule), never which byte differed.
 */
export function inboundRefusal(code: InboundRefusalCode, detail: string, scheme: InboundScheme, allowBearer = false): AuthRefusal {
  return new AuthRefusal(code, TITLES[code], detail, code, { 'WWW-Authenticate': challenge(scheme, allowBearer) });
}
