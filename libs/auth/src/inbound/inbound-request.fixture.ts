import type { InboundRequest } from './inbound-request';

export interface RequestParts {
  /** Header lines as sent: [name, value], a name repeated for a header sent twice. */
  headers: Array<[string, string]>;
  method?: string;
  publicUrl?: string | null;
  nowMs: number;
}

/** An InboundRequest as the gateway builds it from a request's raw headers. */
export function inboundRequest({ headers, method = 'POST', publicUrl = null, nowMs }: RequestParts): InboundRequest {
  return {
    method,
    publicUrl,
    nowMs,
    header: (name) => headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v),
  };
}
