import type { InboundScheme } from '@gi/domain';
import { GiError } from '@gi/domain';
import type { InboundRequest } from './inbound-request';

/**
 * The URL a scheme signs (HubSpot v3, Twilio): PUBLIC_BASE_URL with the path and query as received. A
 * service without one cannot know the URL its producers call (behind a proxy, `Host` is the proxy's
 * choice, or the caller's): it answers 500 naming the setting, and the deploy of such a scheme is refused.
 */
export function signedUrl(request: InboundRequest, scheme: InboundScheme): string {
  if (request.publicUrl === null) {
    throw new GiError('internal', 'Service misconfigured', `The ${scheme} scheme signs the URL it calls, and this service has no PUBLIC_BASE_URL to rebuild it from; its operator must set one.`);
  }
  return request.publicUrl;
}
