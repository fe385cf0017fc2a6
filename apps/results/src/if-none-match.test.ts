import { ifNoneMatch } from './if-none-match';

describe('ifNoneMatch', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    ['"x","y"', false],
    ['*', true],
    ['"ABC"', false],
    ['abc', false],
  ])('%p against "abc" is %p', (header, matches) => {
    expect(ifNoneMatch(header, '"abc"')).toBe(matches);
  });
});
