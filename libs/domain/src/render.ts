import { XMLBuilder } from 'fast-xml-parser';
import { badRequest } from './errors';
import { isJsonMediaType, mediaTypeOf } from './request-entity';

export interface RenderedBody {
  contentType: string;
  payload: string;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Validates a `responseContentType` value and returns its bare media type (lower-cased). */
export function parseResponseContentType(value: string): string {
  const type = mediaTypeOf(value);
  if (!TOKEN.test(type)) throw badRequest(`'responseContentType' must be a media type such as application/json, not '${value.slice(0, 60)}'.`);
  return type;
}

const isXml = (type: string) => type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml');

/**
 * fast-xml-parser refuses more than 100 levels by default; a ResponseBody may nest up to the sandbox's
 * limit of 1,000 (libs/sandbox run/run-budget.ts), and the wrapping adds two.
 */
const xmlBuilder = new XMLBuilder({ format: false, suppressEmptyNode: true, ignoreAttributes: true, maxNestedTags: 1_002 });

function toXml(value: unknown): string {
  // One root element: a lone top-level key names it, anything else is wrapped in <Response>.
  const isPlainObject = typeof value === 'object' && value !== null && !Array.isArray(value);
  const keys = isPlainObject ? Object.keys(value) : [];
  const document = isPlainObject && keys.length === 1 && !Array.isArray((value as Record<string, unknown>)[keys[0]])
    ? value
    : { Response: Array.isArray(value) ? { item: value } : value };
  return `<?xml version="1.0" encoding="UTF-8"?>${xmlBuilder.build(document)}`;
}

/**
 * Renders a `ResponseBody` as the reply body (docs/decisions.md, "Reply after completion"): JSON by `JSON.stringify` (`{}` when missing),
 * text types verbatim for strings and as JSON text otherwise, XML verbatim for strings and converted for objects.
 */
export function renderResponseBody(body: unknown, mediaType: string): RenderedBody {
  const missing = body === undefined || body === null;
  if (isJsonMediaType(mediaType)) {
    return { contentType: `${mediaType}; charset=utf-8`, payload: missing ? '{}' : JSON.stringify(body) };
  }
  const contentType = mediaType.startsWith('text/') || isXml(mediaType) ? `${mediaType}; charset=utf-8` : mediaType;
  if (missing) return { contentType, payload: '' };
  if (typeof body === 'string') return { contentType, payload: body };
  return { contentType, payload: isXml(mediaType) ? toXml(body) : JSON.stringify(body) };
}
