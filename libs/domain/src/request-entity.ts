import sjson from 'secure-json-parse';
import { isPlainJson } from './plain-json';
import { badRequest, unsupportedMediaType } from './errors';
import { DEFAULT_MAX_JSON_DEPTH, jsonNestedDeeperThan } from './json-depth';

/** A file uploaded through GenericIntegrationFileTransfer; the bytes live in the file store. */
export interface FileEntity {
  Id: string;
  FileName: string;
  ContentType: string;
  Size: number;
  Sha256: string;
  PartName: string;
}

/** The webhook entity: the five fields of spec section 2.1. */
export interface WebhookEntity {
  RequestParams: string;
  RequestHeaders: string;
  RequestBody: unknown;
  ResponseBody: unknown;
  RequestFiles?: FileEntity[];
  [field: string]: unknown;
}

/** Query parameters that steer the service and are therefore not the caller's own. */
export const CONTROL_PARAMS = new Set(['asyncResponse', 'responseContentType']);

/** Headers never stored: credentials of the caller or of a proxy on the way. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

const decode = (s: string) => {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
};

export interface ParsedQuery {
  /** The caller's parameters in URL query format, order and repeats preserved, control parameters removed. */
  requestParams: string;
  /** Decoded control parameters (asyncResponse, responseContentType); a repeated one keeps all values. */
  control: Map<string, string[]>;
}

/**
 * Could this raw name decode to a control parameter (ASCII letters, each as itself or as a %XX escape)?
 * Only those are decoded: a caller's query may hold thousands of malformed escapes, and a failed decode
 * costs an exception each.
 */
const MIGHT_BE_CONTROL = /^[A-Za-z0-9%]{13,57}$/;

/** Splits a raw query string (without '?') into the caller's parameters and the control parameters. */
export function parseQuery(rawQuery: string): ParsedQuery {
  const kept: string[] = [];
  const control = new Map<string, string[]>();
  for (const pair of rawQuery.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const name = MIGHT_BE_CONTROL.test(rawName) ? decode(rawName) : rawName;
    if (CONTROL_PARAMS.has(name)) {
      const values = control.get(name) ?? [];
      values.push(eq === -1 ? '' : decode(pair.slice(eq + 1)));
      control.set(name, values);
    } else {
      kept.push(pair);
    }
  }
  return { requestParams: kept.join('&'), control };
}

/** Reads a control parameter that may appear at most once (with one value). */
export function singleControlValue(control: Map<string, string[]>, name: string): string | undefined {
  const values = control.get(name);
  if (!values) return undefined;
  if (new Set(values).size > 1) throw badRequest(`Query parameter '${name}' was given more than once with different values.`);
  return values[0];
}

/** `asyncResponse`: absent means sync; `true`/`false` (any case); anything else is refused. */
export function parseAsyncResponse(value: string | undefined): boolean {
  if (value === undefined) return false;
  const v = value.toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw badRequest(`Query parameter 'asyncResponse' must be 'true' or 'false', not '${value.slice(0, 40)}'.`);
}

/**
 * Headers in URL query format (`name=value&...`) from Node's rawHeaders (alternating name, value):
 * original name case and order kept, credentials left out: those of every call, and the headers that
 * carry the signature or key of the integration's inbound auth (`credentialHeaders`, lower case).
 */
export function formatRequestHeaders(rawHeaders: readonly string[], credentialHeaders?: ReadonlySet<string>): string {
  const parts: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    const lower = name.toLowerCase();
    if (SECRET_HEADERS.has(lower) || credentialHeaders?.has(lower)) continue;
    parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(rawHeaders[i + 1])}`);
  }
  return parts.join('&');
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Media types that are not text: they belong on the file transfer endpoint. */
function isBinaryMediaType(type: string): boolean {
  return (
    type === 'multipart/form-data' ||
    type === 'application/octet-stream' ||
    /^(image|audio|video|font)\//.test(type) ||
    type === 'application/zip' ||
    type === 'application/pdf'
  );
}

/** The bare media type of a Content-Type header, lower-cased, parameters removed. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase();
}

export const isJsonMediaType = (type: string) => type === 'application/json' || type.endsWith('+json');

/** 415 for a binary Content-Type (they belong on the file endpoint), known from the headers alone; else the bare media type. */
export function assertTextMediaType(contentType: string | undefined): string {
  const type = mediaTypeOf(contentType);
  if (isBinaryMediaType(type)) {
    throw unsupportedMediaType(`Content-Type '${type}' is not accepted here: send JSON or text, or use GenericIntegrationFileTransfer for files.`);
  }
  return type;
}

/**
 * `RequestBody` as JSON text, for the entity's stored JSON (requestEntityJson). A JSON body is checked as
 * parseRequestBody checks it and then kept as the caller sent it: parsed objects would only be serialized
 * again, and on a large body that and the parsed copy held while the call runs cost about a quarter of
 * its CPU. Every other body is what parseRequestBody makes of it, serialized.
 */
export function requestBodyJson(contentType: string | undefined, text: string, maxJsonDepth = DEFAULT_MAX_JSON_DEPTH): string {
  if (text.length > 0 && isJsonMediaType(assertTextMediaType(contentType))) {
    // Only a text that is not plainly acceptable is parsed: to be refused with the parser's message.
    if (!isPlainJson(text, maxJsonDepth)) parseJson(text, maxJsonDepth);
    return text;
  }
  return JSON.stringify(parseRequestBody(contentType, text, maxJsonDepth));
}

/** The entity's fields other than RequestBody. */
export type EntityFields = Pick<WebhookEntity, 'RequestParams' | 'RequestHeaders' | 'ResponseBody' | 'RequestFiles'>;

/**
 * The entity as JSON text, as the stores keep it and the sandbox parses it, from its other fields and
 * RequestBody's JSON text (requestBodyJson). The fields keep the order of the spec: RequestParams,
 * RequestHeaders, RequestBody, ResponseBody, then RequestFiles when there are files.
 */
export function requestEntityJson(fields: EntityFields, bodyJson: string): string {
  const files = fields.RequestFiles === undefined ? '' : `,"RequestFiles":${JSON.stringify(fields.RequestFiles)}`;
  return `{"RequestParams":${JSON.stringify(fields.RequestParams)},"RequestHeaders":${JSON.stringify(fields.RequestHeaders)},"RequestBody":${bodyJson},"ResponseBody":${JSON.stringify(fields.ResponseBody ?? null)}${files}}`;
}

/** What follows RequestBody in a new entity's JSON without files (requestEntityJson). */
const NEW_ENTITY_TAIL = ',"ResponseBody":null}';

/** Where a raw body lies in its entity's JSON: `entityJson.slice(start, end)`. */
export type RawBodySpan = readonly [start: number, end: number];

/**
 * Where the raw body lies in the entity's JSON, when it is there as the caller sent it (a JSON body:
 * requestBodyJson keeps it as is), else null. Stores and the sandbox's thread then take the body once,
 * not twice: on a 93 KB body that was a fifth of the call's cost. Checked, not assumed (about 2 µs
 * for 100 KB): whatever built the entity, the span's text is the raw body.
 */
export function rawBodySpan(entityJson: string, rawBody: string | null): RawBodySpan | null {
  if (!rawBody) return null;
  const end = entityJson.length - NEW_ENTITY_TAIL.length;
  const start = end - rawBody.length;
  return start > 0 && entityJson.endsWith(NEW_ENTITY_TAIL) && entityJson.slice(start, end) === rawBody ? [start, end] : null;
}

/** The raw body as a slice of the entity's JSON when it lies there (rawBodySpan): one copy in memory, not two. */
export function rawBodyWithin(entityJson: string, rawBody: string | null): string | null {
  return rawBodyOf(entityJson, null, rawBodySpan(entityJson, rawBody)) ?? rawBody;
}

/** The raw body kept as `rawBody`, or as a span of the entity's JSON (rawBodySpan), or none. */
export function rawBodyOf(entityJson: string, rawBody: string | null, span: RawBodySpan | null | undefined): string | null {
  return rawBody ?? (span ? entityJson.slice(span[0], span[1]) : null);
}

/**
 * `RequestBody` from the raw body: JSON parsed (nested at most `maxJsonDepth` deep, prototype-pollution
 * keys refused), form-urlencoded as an object (repeated keys become arrays: never deeper than 2), any
 * other text as a string, an empty body as null.
 */
export function parseRequestBody(contentType: string | undefined, text: string, maxJsonDepth = DEFAULT_MAX_JSON_DEPTH): unknown {
  const type = assertTextMediaType(contentType);
  if (text.length === 0) return null;
  if (isJsonMediaType(type)) return parseJson(text, maxJsonDepth);
  if (type === 'application/x-www-form-urlencoded') return parseForm(text);
  return text;
}

/**
 * JSON.parse that refuses JSON nested more than `maxDepth` deep (checked before parsing: such a value
 * could not be stored or handed on) and `__proto__` and `constructor.prototype` keys instead of silently
 * keeping them.
 */
export function parseJson(text: string, maxDepth = DEFAULT_MAX_JSON_DEPTH): unknown {
  if (jsonNestedDeeperThan(text, maxDepth)) {
    throw badRequest(`The request body could not be read: it nests arrays and objects deeper than the limit of ${maxDepth} levels.`, {
      extensions: { maxJsonDepth: maxDepth },
    });
  }
  try {
    return sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    const reason = error instanceof SyntaxError && /prototype/i.test(error.message)
      ? 'it contains a forbidden key (__proto__ or constructor.prototype)'
      : `it is not valid JSON (${(error as Error).message})`;
    throw badRequest(`The request body could not be read: ${reason}.`);
  }
}

function parseForm(text: string): Record<string, string | string[]> {
  const form: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    if (FORBIDDEN_KEYS.has(key)) throw badRequest(`The form field name '${key}' is not allowed.`);
    const existing = form[key];
    if (existing === undefined) form[key] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else form[key] = [existing, value];
  }
  return form;
}
