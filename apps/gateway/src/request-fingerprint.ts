import { createHash } from 'node:crypto';
import { MAX_IDEMPOTENCY_KEY_LENGTH, mediaTypeOf } from '@gi/domain';
import type { Endpoint, FileEntity, VerifiedInbound } from '@gi/domain';

/** What makes two webhook requests "the same request" for an Idempotency-Key. */
export interface FingerprintedRequest {
  botId: string;
  entityName: string;
  integrationId: string;
  endpoint: Endpoint;
  /** The query string exactly as sent (order, encoding, control parameters included). */
  rawQuery: string;
  contentType: string | undefined;
  /** A text body as read, or a multipart request's fields (RequestBody) and stored files. */
  body: string | { fields: unknown; files: FileEntity[] };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The fingerprint of a request: SHA-256 over the method, the path (bot, entity, integration, endpoint),
 * the query as sent, the media type of its Content-Type (parameters left out: a multipart boundary
 * differs on every send) and the SHA-256 of its body. A multipart body counts by its fields and its
 * files' part names, file names, content types and SHA-256s, so a re-sent upload matches whatever
 * boundary the client chose. Other headers (Authorization, Prefer, tracing) do not count.
 */
export function requestFingerprint(request: FingerprintedRequest): string {
  const body =
    typeof request.body === 'string'
      ? request.body
      : JSON.stringify({
          fields: request.body.fields,
          files: request.body.files.map((file) => [file.PartName, file.FileName, file.ContentType, file.Sha256]),
        });
  const path = [request.botId, request.entityName, request.integrationId, request.endpoint].map(encodeURIComponent).join('/');
  return sha256(JSON.stringify(['POST', path, request.rawQuery, mediaTypeOf(request.contentType), sha256(body)]));
}

/**
 * The Idempotency-Key of a delivery the integration's inbound scheme verified: `delivery:<integration>:<id>`
 * (a producer such as Stripe sends one event to every endpoint subscribed to it, so keys are per
 * integration), its SHA-256 when that is longer than a key may be. Its fingerprint is the integration
 * and the scheme alone: the producer's id names the delivery, and a retry may differ in its body
 * (HubSpot counts `attemptNumber` up) as in its signature headers.
 */
export function deliveryKey(integrationId: string, inbound: VerifiedInbound & { deliveryId: string }): { key: string; fingerprint: string } {
  const plain = `delivery:${integrationId}:${inbound.deliveryId}`;
  const key = plain.length <= MAX_IDEMPOTENCY_KEY_LENGTH ? plain : `delivery:sha256:${sha256(plain)}`;
  return { key, fingerprint: sha256(JSON.stringify(['delivery', integrationId, inbound.scheme])) };
}
