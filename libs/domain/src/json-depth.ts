/**
 * The deepest nesting of arrays and objects a JSON body may have by default: System.Text.Json's, far
 * beyond what business payloads use and far within what every later step handles (JSON.stringify, the
 * sandbox's structured cloning and the connector's own code recurse).
 */
export const DEFAULT_MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether JSON text nests arrays and objects more than `maxDepth` deep (`[]` is 1 deep, `[[]]` 2), found
 * by one loop over the text, without recursion and without parsing: a megabyte of `[` costs a
 * millisecond, never the stack. Brackets inside strings do not count; text that is not JSON gives an
 * answer the parser then makes moot.
 */
export function jsonNestedDeeperThan(text: string, maxDepth: number): boolean {
  // Every level needs a character of its own.
  if (text.length <= maxDepth) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
      if (i === -1) return false;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote ending the string opened at `open`, or -1 when it never ends. */
function closingQuote(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at === -1) return -1;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}
