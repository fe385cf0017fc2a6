import fc from 'fast-check';
import { isPlainJson } from './plain-json';
import { parseJson } from './request-entity';

/** The check it stands in for: JSON.parse with the depth and key checks; true when the body is accepted. */
const accepted = (text: string, maxDepth = 64): boolean => {
  try {
    parseJson(text, maxDepth);
    return true;
  } catch {
    return false;
  }
};

/** A text it finds plain is always accepted; one it does not is refused, unless it repeats a `constructor` key (JSON.parse keeps the last). */
const agrees = (text: string, maxDepth = 64): void => {
  const plain = isPlainJson(text, maxDepth);
  const parsed = accepted(text, maxDepth);
  if (plain) expect(parsed).toBe(true);
  else if (parsed) expect(text).toMatch(/constructor/);
};

/** Characters JSON is made of, and some it refuses or treats specially. */
const JSONISH = [...'{}[],:" \t\n\r\\/ubfnrt0123456789-+.eEalsx_', '\u0000', '\u001f', '\u007f', '\u2028', '\ud800', 'é', '😀', '__proto__', 'constructor', 'prototype', '\\u005f'];

const jsonText = fc.tuple(fc.jsonValue({ maxDepth: 6 }), fc.constantFrom(undefined, 1, 2, '\t')).map(([value, space]) => JSON.stringify(value, null, space));

/** A JSON text with a few characters inserted, deleted or replaced. */
const mutated = fc
  .tuple(
    jsonText,
    fc.array(fc.tuple(fc.constantFrom('insert', 'delete', 'replace'), fc.nat(), fc.constantFrom(...JSONISH)), { minLength: 1, maxLength: 4 }),
  )
  .map(([text, edits]) =>
    edits.reduce((t, [edit, at, piece]) => {
      const i = t.length === 0 ? 0 : at % (t.length + 1);
      if (edit === 'insert') return t.slice(0, i) + piece + t.slice(i);
      if (edit === 'delete') return t.slice(0, i) + t.slice(i + 1);
      return t.slice(0, i) + piece + t.slice(i + 1);
    }, text),
  );

describe('a plainly acceptable JSON body, found without parsing', () => {
  it('accepts every JSON text, compact or indented, that the parser accepts', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        expect(isPlainJson(text, 64)).toBe(accepted(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts nothing the parser refuses, whatever is inserted, deleted or replaced', () => {
    fc.assert(fc.property(mutated, (text) => agrees(text)), { numRuns: 20000 });
  });

  it('agrees with the parser on texts of JSON characters in any order', () => {
    fc.assert(fc.property(fc.array(fc.constantFrom(...JSONISH), { maxLength: 30 }).map((parts) => parts.join('')), (text) => agrees(text)), { numRuns: 20000 });
  });

  it('agrees with the parser on numbers, and on strings of any characters and escapes', () => {
    const number = fc.array(fc.constantFrom(...'-+.eE0123456789'), { minLength: 1, maxLength: 12 }).map((parts) => parts.join(''));
    const string = fc.array(fc.oneof(fc.string({ unit: 'binary', maxLength: 4 }), fc.constantFrom('\\', '\\u', '\\u00', '\\u0041', '\\uD800', '\\x41', '\\"', '\\/', '\\b', '"')), { maxLength: 8 }).map((parts) => `"${parts.join('')}"`);
    fc.assert(
      fc.property(fc.oneof(number, string), fc.constantFrom('%', '[%]', '{"k":%}', '[1,%]'), (value, shape) => {
        const text = shape.replace('%', value);
        expect(isPlainJson(text, 64)).toBe(accepted(text));
      }),
      { numRuns: 20000 },
    );
  });

  it('counts depth as the limit does: arrays and objects alike, [] one deep', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('[', '{"a":'), { minLength: 0, maxLength: 12 }), fc.integer({ min: 1, max: 12 }), (opens, maxDepth) => {
        const closes = [...opens].reverse().map((open) => (open === '[' ? ']' : '}'));
        const text = `${opens.join('')}1${closes.join('')}`;
        expect(isPlainJson(text, maxDepth)).toBe(opens.length <= maxDepth);
        expect(accepted(text, maxDepth)).toBe(opens.length <= maxDepth);
      }),
    );
  });

  it.each([
    ['{"__proto__":{"admin":true}}'],
    ['{"a":[{"\\u005f_proto__":1}]}'],
    ['{"constructor":{"prototype":{"admin":true}}}'],
    ['{"constructor":{"a":1,"protot\\u0079pe":2}}'],
    ['[{"x":{"constructor":{"prototype":null}}}]'],
  ])('leaves a key that reaches a prototype to the parser, which refuses it: %s', (text) => {
    expect(isPlainJson(text, 64)).toBe(false);
    expect(accepted(text)).toBe(false);
  });

  it.each([
    ['{"constructor":1,"prototype":2}'],
    ['{"constructor":[{"prototype":1}]}'],
    ['{"a":{"constructor":"x"},"prototype":1}'],
    ['{"__proto":1,"proto__":2,"constructor":{"prototypes":1}}'],
    ['{"a":{"prototype":1}}'],
  ])('accepts keys that only look like those: %s', (text) => {
    expect(isPlainJson(text, 64)).toBe(true);
    expect(accepted(text)).toBe(true);
  });

  it.each([
    [''], [' '], ['1 2'], ['[1,]'], ['{"a":1,}'], ['{,}'], ['[,1]'], ['01'], ['-'], ['1.'], ['.5'], ['1e'], ['+1'], ['0x10'], ['NaN'], ['Infinity'], ['tru'], ['nul'],
    ['"\u0000"'], ['"tab\there"'], ['"line\nbreak"'], ['"\\x41"'], ['"\\u12G4"'], ['"unterminated'], ["'single'"], ['{"a" 1}'], ['{a:1}'], ['[1]]'], ['[[1]'], ['\u00a01'], ['1\u2028'], ['// c\n1'],
  ])('leaves what is not one JSON value to the parser, which refuses it: %j', (text) => {
    expect(isPlainJson(text, 64)).toBe(false);
    expect(accepted(text)).toBe(false);
  });

  it.each([['"\ud800"'], ['"\\ud800"'], ['"tab\\tand line\\n, \\u00AF\\u0aFf"'], ['"\u2028 and 😀"'], ['-0'], ['1E+400'], ['[[],{},"",0,true,false,null]'], [' \t\r\n{ "a" : [ 1 , 2 ] } \n']])('accepts what the parser accepts: %j', (text) => {
    expect(isPlainJson(text, 64)).toBe(true);
    expect(accepted(text)).toBe(true);
  });

  it('finds a key that reaches a prototype at the deepest level allowed', () => {
    expect(isPlainJson('{"constructor":{"prototype":1}}', 2)).toBe(false);
    expect(isPlainJson('[[{"constructor":{"prototype":1}}]]', 4)).toBe(false);
    expect(isPlainJson('[[{"constructor":{"prototypes":1}}]]', 4)).toBe(true);
  });

  it('reads a megabyte of [ in one pass, and stops at the limit', () => {
    expect(isPlainJson('['.repeat(1_000_000), 64)).toBe(false);
    expect(isPlainJson(`${'['.repeat(64)}${']'.repeat(64)}`, 64)).toBe(true);
  });
});
