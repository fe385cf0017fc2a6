import fc from 'fast-check';
import { posix } from 'node:path';
import { callbackUrlProblem, parseCallbackHeader } from './callbacks';
import { sourcePathProblem } from './connector-code';
import { GiError } from './errors';
import type { ErrorCode } from './errors';
import { MAX_IDEMPOTENCY_KEY_LENGTH, parseIdempotencyKey } from './idempotency';
import { jsonNestedDeeperThan } from './json-depth';
import { parseResponseContentType } from './render';
import { formatRequestHeaders, parseAsyncResponse, parseJson, parseQuery, parseRequestBody, singleControlValue } from './request-entity';

/**
 * Property-based fuzzing of the parsers a caller's request reaches in the domain: each one either
 * returns or refuses with a client error (never another exception), and keeps its invariants (round
 * trips, idempotence) for every input fast-check finds.
 */

/** Runs `parse`; anything thrown must be a GiError with one of `codes`. */
function returnsOrRefuses<T>(parse: () => T, codes: ErrorCode[] = ['bad_request']): { value?: T; refused?: GiError } {
  try {
    return { value: parse() };
  } catch (error) {
    if (error instanceof GiError && codes.includes(error.code)) return { refused: error };
    throw error;
  }
}

/** Depth of a JSON value, recursively (the values generated here are small). */
const depthOf = (value: unknown): number =>
  value !== null && typeof value === 'object' ? 1 + Math.max(0, ...Object.values(value as Record<string, unknown>).map(depthOf)) : 0;

const anyText = fc.string({ unit: 'binary', maxLength: 300 });
/** Text made mostly of what the depth scan looks at. */
const bracketText = fc.array(fc.constantFrom('[', ']', '{', '}', '"', '\\', ',', ':', 'a', '1', ' '), { maxLength: 200 }).map((chars) => chars.join(''));
const FORBIDDEN_KEY = /"(__proto__|constructor|prototype)"/;

/** Up to 16 KiB (Node's limit for all headers) repeating a short pattern of the characters a parser looks at. */
const adversarial = (alphabet: string[], length = 16 * 1024) =>
  fc.array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: 4 }).map((pattern) => pattern.join('').repeat(Math.ceil(length / pattern.length)).slice(0, length));

const elapsedMs = (run: () => unknown) => {
  const started = process.hrtime.bigint();
  try {
    run();
  } catch {
    // Refusing is fine; the time is what counts here.
  }
  return Number(process.hrtime.bigint() - started) / 1e6;
};

describe('every header and query parser', () => {
  it('takes time linear in its input: 16 KiB of any repeated pattern in well under 50 ms', () => {
    const parsers: Array<(text: string) => unknown> = [
      (text) => parseIdempotencyKey([text]),
      (text) => parseCallbackHeader([text]),
      (text) => parseQuery(text),
      (text) => parseResponseContentType(text),
      (text) => parseRequestBody(text, '{}'),
      (text) => formatRequestHeaders(['X-A', text, 'X-B', text]),
    ];
    fc.assert(
      fc.property(adversarial(['"', '\\', ',', ';', '=', '&', '%', '/', '+', ' ', 'a', '\t']), (text) => {
        // The best of three: backtracking is slow every time, a collection or a busy machine once.
        for (const parse of parsers) expect(Math.min(elapsedMs(() => parse(text)), elapsedMs(() => parse(text)), elapsedMs(() => parse(text)))).toBeLessThan(50);
      }),
      { numRuns: 100 },
    );
  });
});

describe('JSON depth (jsonNestedDeeperThan)', () => {
  it('agrees with the depth of every JSON value, at every limit', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (value, max) => {
        expect(jsonNestedDeeperThan(JSON.stringify(value), max)).toBe(depthOf(value) > max);
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on any text, and a text deeper than a limit is deeper than every smaller one', () => {
    fc.assert(
      fc.property(fc.oneof(anyText, bracketText), fc.integer({ min: 1, max: 20 }), (text, max) => {
        if (jsonNestedDeeperThan(text, max)) expect(jsonNestedDeeperThan(text, max - 1)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('parseJson', () => {
  it('round-trips every JSON value within the depth limit, or refuses a forbidden key', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const text = JSON.stringify(value);
        const { value: parsed, refused } = returnsOrRefuses(() => parseJson(text, 64));
        if (refused) expect(text).toMatch(FORBIDDEN_KEY);
        else expect(parsed).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses nesting past the limit, and only that, whatever the containers', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('[]', '{"k":}'), { minLength: 1, maxLength: 120 }), fc.integer({ min: 1, max: 100 }), (levels, max) => {
        const text = levels.reduceRight((inner, level) => (level === '[]' ? `[${inner}]` : `{"k":${inner}}`), '0');
        const { refused } = returnsOrRefuses(() => parseJson(text, max));
        expect(refused !== undefined).toBe(levels.length > max);
      }),
      { numRuns: 300 },
    );
  });

  it('returns or answers 400 for any text', () => {
    fc.assert(fc.property(fc.oneof(anyText, bracketText), (text) => void returnsOrRefuses(() => parseJson(text, 64))), { numRuns: 1000 });
  });
});

describe('parseRequestBody', () => {
  const contentType = fc.oneof(
    fc.constantFrom(undefined, 'application/json', 'application/json; charset=utf-8', 'application/vnd.x+json', 'text/plain', 'text/xml', 'application/xml', 'application/x-www-form-urlencoded', 'application/octet-stream', 'multipart/form-data; boundary=x', 'image/png', ''),
    fc.string({ maxLength: 40 }),
  );

  it('returns a body or refuses with 400 or 415, for any content type and text', () => {
    fc.assert(fc.property(contentType, fc.oneof(anyText, bracketText), (type, text) => void returnsOrRefuses(() => parseRequestBody(type, text), ['bad_request', 'unsupported_media_type'])), {
      numRuns: 1000,
    });
  });

  it('keeps any text of a text type exactly (an empty body is null)', () => {
    fc.assert(
      fc.property(fc.constantFrom('text/plain', 'text/xml', 'application/xml', 'text/csv; charset=utf-8', undefined), anyText, (type, text) => {
        expect(parseRequestBody(type, text)).toBe(text === '' ? null : text);
      }),
      { numRuns: 300 },
    );
  });

  it('reads any form as its pairs: one value a string, repeated values an array in order', () => {
    const pair = fc.tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 10 }).filter((key) => !['__proto__', 'constructor', 'prototype'].includes(key)), fc.string({ unit: 'binary', maxLength: 20 }));
    fc.assert(
      fc.property(fc.array(pair, { minLength: 1, maxLength: 10 }), (pairs) => {
        const text = new URLSearchParams(pairs).toString();
        const expected: Record<string, string | string[]> = {};
        // URLSearchParams encodes lone surrogates as U+FFFD: compare what it sends.
        for (const [key, value] of new URLSearchParams(text)) {
          const seen = expected[key];
          expected[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
        }
        expect(parseRequestBody('application/x-www-form-urlencoded', text)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});

describe('formatRequestHeaders (RequestHeaders)', () => {
  const name = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}$/);
  const value = fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((code) => String.fromCharCode(code)), maxLength: 40 });
  const SECRET = /^(authorization|proxy-authorization|cookie)$/i;

  it('encodes every header but the credentials, in order, so that decoding gives them back', () => {
    const secret = fc.tuple(fc.constantFrom('Authorization', 'cookie', 'PROXY-AUTHORIZATION'), value);
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.tuple(name, value), secret), { maxLength: 20 }), (headers) => {
        const formatted = formatRequestHeaders(headers.flat());
        const decoded = formatted === '' ? [] : formatted.split('&').map((pair) => pair.split('=').map(decodeURIComponent));
        expect(decoded).toEqual(headers.filter(([n]) => !SECRET.test(n)));
      }),
      { numRuns: 500 },
    );
  });
});

describe('parseIdempotencyKey', () => {
  it('returns a key, null or 400 for any header values', () => {
    fc.assert(fc.property(fc.array(anyText, { maxLength: 3 }), (values) => void returnsOrRefuses(() => parseIdempotencyKey(values))), { numRuns: 1000 });
  });

  it('gives back every printable key sent quoted (escapes undone), and every bare one', () => {
    const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH });
    fc.assert(
      fc.property(printable, (key) => {
        expect(parseIdempotencyKey([`"${key.replace(/["\\]/g, '\\$&')}"`])).toBe(key);
        if (/^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]+$/.test(key)) expect(parseIdempotencyKey([key])).toBe(key);
      }),
      { numRuns: 500 },
    );
  });
});

describe('parseQuery and the control parameters', () => {
  const queryText = fc.array(
    fc.oneof(
      fc.constantFrom('asyncResponse=true', 'asyncResponse=false', 'asyncResponse', 'responseContentType=text%2Fplain', 'async%52esponse=true', '=', '&', '%', '%E0%A4%A'),
      fc.string({ maxLength: 15 }),
    ),
    { maxLength: 8 },
  ).map((parts) => parts.join('&'));

  it('keeps the caller parameters in order and drops the control ones, idempotently', () => {
    fc.assert(
      fc.property(queryText, (raw) => {
        const { requestParams, control } = parseQuery(raw);
        const again = parseQuery(requestParams);
        expect([again.requestParams, again.control.size]).toEqual([requestParams, 0]);
        expect(raw.split('&').filter((pair) => pair !== '' && requestParams.split('&').includes(pair)).join('&')).toBe(requestParams);
        returnsOrRefuses(() => parseAsyncResponse(singleControlValue(control, 'asyncResponse')));
        returnsOrRefuses(() => {
          const type = singleControlValue(control, 'responseContentType');
          return type === undefined ? undefined : parseResponseContentType(type);
        });
      }),
      { numRuns: 1000 },
    );
  });
});

describe('parseCallbackHeader (Callback-Url)', () => {
  it('returns an absolute http(s) URL without credentials, or 400, for any header value', () => {
    const portZero = fc.webUrl().map((url) => {
      const { protocol, hostname, pathname } = new URL(url);
      return `${protocol}//${hostname}:${'0'.repeat(1 + (url.length % 3))}${pathname}`;
    });
    const header = fc.oneof(anyText, fc.webUrl(), fc.webUrl().map((url) => url.replace('://', '://user:pw@')), portZero, fc.constantFrom('ftp://x', 'http://', ' https://a.example/ ', 'javascript:alert(1)'));
    fc.assert(
      fc.property(header, (value) => {
        const { value: url } = returnsOrRefuses(() => parseCallbackHeader([value]));
        if (url !== undefined) {
          expect(callbackUrlProblem(url)).toBeNull();
          expect(['http:', 'https:']).toContain(new URL(url).protocol);
          expect(new URL(url).port).not.toBe('0');
        }
        // Sent twice, whatever the values: refused.
        expect(returnsOrRefuses(() => parseCallbackHeader([value, value])).value).toBeUndefined();
      }),
      { numRuns: 1000 },
    );
  });
});

describe('sourcePathProblem (connector source paths)', () => {
  it('accepts only paths that stay under the project root as written and show what they hold', () => {
    const part = fc.oneof(fc.constantFrom('..', '.', '', 'src', 'a.ts', '\u202E', '\u2028', '\u200b', '\u0085', '\\'), fc.string({ unit: 'grapheme', maxLength: 6 }));
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 6 }), fc.boolean(), (parts, absolute) => {
        const path = (absolute ? '/' : '') + parts.join('/');
        if (sourcePathProblem(path) !== null) return;
        expect(posix.normalize(path)).toBe(path);
        expect(path.startsWith('/') || path.startsWith('../') || path === '..').toBe(false);
        expect(path).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
      }),
      { numRuns: 2000 },
    );
  });
});
