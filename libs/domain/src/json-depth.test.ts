import fc from 'fast-check';
import { jsonNestedDeeperThan } from './json-depth';

/** How deep a parsed value nests arrays and objects: `[]` is 1 deep, a scalar 0. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe('jsonNestedDeeperThan', () => {
  it('counts each array and object level, not the brackets beside each other', () => {
    expect(jsonNestedDeeperThan('[[]]', 1)).toBe(true);
    expect(jsonNestedDeeperThan('[[]]', 2)).toBe(false);
    expect(jsonNestedDeeperThan('[[],[],[]]', 2)).toBe(false);
    expect(jsonNestedDeeperThan('{"a":{"b":[1]},"c":{}}', 2)).toBe(true);
    expect(jsonNestedDeeperThan('{"a":{"b":[1]},"c":{}}', 3)).toBe(false);
    expect(jsonNestedDeeperThan('[][][][[]]', 1)).toBe(true);
  });

  it('skips brackets inside strings, escaped quotes included', () => {
    expect(jsonNestedDeeperThan('["[[[[[[", "]]]"]', 1)).toBe(false);
    expect(jsonNestedDeeperThan('["a\\"[[[[[", 1]', 1)).toBe(false);
    // An escaped backslash ends before the quote: the brackets after it count.
    expect(jsonNestedDeeperThan('["a\\\\", [[1]]]', 2)).toBe(true);
    expect(jsonNestedDeeperThan('["a\\\\\\"[[", [1]]', 2)).toBe(false);
    expect(jsonNestedDeeperThan('[{"k[[[": "v{{{"}, "\\\\"]', 2)).toBe(false);
  });

  it('gives up on a string that never ends (the parser refuses the text)', () => {
    expect(jsonNestedDeeperThan(`["open${'['.repeat(100)}`, 5)).toBe(false);
    expect(jsonNestedDeeperThan(`["a\\"${'['.repeat(100)}`, 5)).toBe(false);
  });

  it('agrees with the depth of the parsed value, however it is spaced (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.constantFrom(undefined, 1, '\t'), fc.nat({ max: 10 }), (value, indent, limit) => {
        const text = JSON.stringify(value, null, indent);
        expect(jsonNestedDeeperThan(text, limit)).toBe(depthOf(value) > limit);
      }),
      { numRuns: 300 },
    );
  });
});
