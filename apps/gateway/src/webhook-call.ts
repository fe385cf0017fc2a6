import type { Endpoint, IntegrationTarget } from '@gi/domain';
import type { InboundCheck } from './inbound-access';
import type { Preferences } from './prefer';
import type { ReceivedRequest } from './receive-files';

/**
 * Reads the body once the call is known to be valid: the text of a body exactly as sent, or a multipart
 * request already received (its files stored under the invocation id given).
 */
export type BodyReader = (invocationId: string) => Promise<string | ReceivedRequest>;

/** A webhook call as the router read it from the request line and headers. */
export interface WebhookCall {
  botId: string;
  /** The token the call came with; null when its integration's inbound scheme verified it. */
  tokenId: string | null;
  /** The integration the path names, if the access check resolved it already (null: the bot has none of that id). */
  integration?: IntegrationTarget | null;
  /** The inbound scheme's check of the call (its body's, once read); null for a call made with a token. */
  inbound?: InboundCheck | null;
  /** Headers carrying the inbound scheme's credential: left out of RequestHeaders like Authorization. */
  credentialHeaders?: ReadonlySet<string>;
  entityName: string;
  integrationId: string;
  endpoint: Endpoint;
  rawQuery: string;
  rawHeaders: string[];
  contentType: string | undefined;
  /** The Callback-Url header's values, one per header line, if sent. */
  callbackHeader: readonly string[] | undefined;
  /** The caller's Idempotency-Key, if it sent one. */
  idempotencyKey: string | null;
  /** What the caller's `Prefer` header asks for (respond-async is never honoured below platform 9.10). */
  prefer: Preferences;
  /**
   * Refuses what the headers alone show cannot be read (415, 413) and returns the body's reader; called
   * once the call is admitted, before anything of the body is read.
   */
  prepareBody: () => BodyReader;
}
