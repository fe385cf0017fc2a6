/**
 * `RequestBody` read lazily. A large JSON body parsed whole by QuickJS's `JSON.parse` was most of the
 * cost of a run (a 93 KB body: about 60%), paid even by connectors that never look at it or read one
 * field. So a JSON object body at least LAZY_BODY_CHARS long is left out of the entity's parse: the
 * entity's `RequestBody` is made on its first read, and then each of the body's own members on its
 * first read, from its slice of the text, copied into the sandbox then. The members are found on the
 * host, by a scan that parses nothing.
 *
 * What connector code sees is the same value: a plain object with the same members in the same order.
 * A member not read yet is an accessor that turns into a plain data property when read or written.
 * A member whose JSON is invalid throws a SyntaxError when it is read (the gateway only lets valid JSON
 * through; a body from elsewhere that is not JSON as a whole is parsed whole, and fails as before).
 */

/** Bodies shorter than this are parsed whole: they cost little, and their members are plain at once. */
export const LAZY_BODY_CHARS = 4096;

/** The body's members, flattened: key, start, end (of its value's JSON in the body's text), key, ... */
export type BodyMembers = Array<string | number>;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const BOM = 0xfeff;

const isSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/**
 * The members of a JSON object text, each with where its value lies; null when the text is not one
 * object as far as this scan checks (the caller then parses it whole). Values are skipped, not
 * checked: brackets are matched and strings stepped over. A key given twice keeps its first place and
 * its last value, as JSON.parse does.
 */
export function bodyObjectMembers(text: string): BodyMembers | null {
  let at = skipSpace(text, text.charCodeAt(0) === BOM ? 1 : 0);
  if (text.charCodeAt(at) !== OPEN_BRACE) return null;
  at = skipSpace(text, at + 1);
  const members = new Map<string, [number, number]>();
  if (text.charCodeAt(at) === CLOSE_BRACE) return skipSpace(text, at + 1) === text.length ? [] : null;
  for (;;) {
    if (text.charCodeAt(at) !== QUOTE) return null;
    const keyEnd = stringEnd(text, at);
    if (keyEnd < 0) return null;
    let key: unknown;
    try {
      key = JSON.parse(text.slice(at, keyEnd));
    } catch {
      return null;
    }
    at = skipSpace(text, keyEnd);
    if (text.charCodeAt(at) !== COLON) return null;
    const start = skipSpace(text, at + 1);
    const end = valueEnd(text, start);
    if (end <= start) return null;
    members.set(key as string, [start, end]);
    at = skipSpace(text, end);
    const next = text.charCodeAt(at);
    if (next === CLOSE_BRACE) break;
    if (next !== COMMA) return null;
    at = skipSpace(text, at + 1);
  }
  if (skipSpace(text, at + 1) !== text.length) return null;
  const flat: BodyMembers = [];
  for (const [key, [start, end]] of members) flat.push(key, start, end);
  return flat;
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && isSpace(text.charCodeAt(at))) at++;
  return at;
}

/** Just past the string literal that starts at `at` (its opening quote); -1 when it does not end. */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; ; ) {
    const quote = text.indexOf('"', i);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    i = quote + 1;
  }
}

/** Just past the value that starts at `at`: a string, an object or array (brackets matched), or a literal up to the next delimiter. */
function valueEnd(text: string, at: number): number {
  const first = text.charCodeAt(at);
  if (first === QUOTE) return stringEnd(text, at);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (let i = at; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code === QUOTE) {
        i = stringEnd(text, i) - 1;
        if (i < 0) return -1;
      } else if (code === OPEN_BRACE || code === OPEN_BRACKET) depth++;
      else if ((code === CLOSE_BRACE || code === CLOSE_BRACKET) && --depth === 0) return i + 1;
    }
    return -1;
  }
  let i = at;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === COMMA || code === CLOSE_BRACE || code === CLOSE_BRACKET || isSpace(code)) break;
    i++;
  }
  return i;
}

/**
 * Evaluated in the sandbox once, before any connector code exists (so what it captures cannot have
 * been replaced): given the host functions `bodyText(start, end)` (the body's text, or that slice of
 * it: a member's value is copied into the sandbox when read, not the whole body) and `bodyMembers()`
 * (the members as JSON, or null to parse the text whole), it returns the function that makes an
 * entity's `RequestBody` lazy.
 * Descriptors have no prototype: a connector's `Object.prototype.get` must not turn them into accessors.
 */
export const LAZY_BODY_SOURCE = `(function (bodyText, bodyMembers) {
  'use strict';
  const parse = JSON.parse;
  const defineProperty = Object.defineProperty;
  const isFrozen = Object.isFrozen;
  const data = (value) => ({ __proto__: null, value, writable: true, enumerable: true, configurable: true });
  function lazy(target, key, make) {
    let value;
    let made = false;
    const settle = () => {
      try {
        defineProperty(target, key, data(value));
      } catch {
        // Sealed or frozen meanwhile: the accessor goes on serving the value.
      }
    };
    defineProperty(target, key, {
      __proto__: null,
      enumerable: true,
      configurable: true,
      get() {
        if (!made) {
          value = make();
          made = true;
          settle();
        }
        return value;
      },
      set(given) {
        if (this !== target) return void defineProperty(this, key, data(given));
        if (isFrozen(target)) return;
        value = given;
        made = true;
        settle();
      },
    });
  }
  function body() {
    const members = bodyMembers();
    if (members === null) return parse(bodyText());
    const list = parse(members);
    const object = {};
    for (let i = 0; i < list.length; i += 3) {
      const start = list[i + 1];
      const end = list[i + 2];
      lazy(object, list[i], () => parse(bodyText(start, end)));
    }
    return object;
  }
  return (entity) => lazy(entity, 'RequestBody', body);
})`;
