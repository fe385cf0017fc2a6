/**
 * Whether `text` is plainly acceptable as a JSON request body: exactly one JSON value as JSON.parse reads
 * it, nested at most `maxDepth` deep (`[]` is 1 deep), with no `__proto__` key and no `constructor` key
 * whose object holds a `prototype` key. Found in one pass over the text that builds nothing: the gateway
 * keeps a JSON body as text and only has to know it is acceptable, and building the value to throw it
 * away cost a 93 KB body most of its check (JSON.parse, the depth scan, the key scans) and left its
 * objects to the garbage collector (docs/benchmarks.md).
 *
 * False means "not plainly so", never "refused": the caller then parses the text as before, which
 * refuses it with the parser's own message, or accepts what this pass is stricter about (a
 * `constructor` key repeated, of which JSON.parse keeps the last). Nothing false is ever accepted: a
 * text this accepts is one JSON.parse accepts (`plain-json.test.ts` checks both against the parser).
 */
export function isPlainJson(text: string, maxDepth: number): boolean {
  try {
    return new PlainJsonScan(text, maxDepth).acceptable();
  } catch (error) {
    if (error === NOT_PLAIN) return false;
    throw error;
  }
}

const NOT_PLAIN = Symbol('not plain JSON');

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const DOT = 0x2e;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const ZERO = 0x30;
const NINE = 0x39;
const SPACE = 0x20;

/** The characters a backslash may escape besides `u`: `"` `\` `/` `b` `f` `n` `r` `t`. */
const SIMPLE_ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);

const ESCAPE_OR_CONTROL = /[\\\u0000-\u001f]/;

const isDigit = (c: number) => c >= ZERO && c <= NINE;
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const isSpace = (c: number) => c === SPACE || c === 0x0a || c === 0x0d || c === 0x09;

const OBJECT = 1;
const ARRAY = 2;

/** One pass over the text, without recursion: the open arrays and objects are kept in `kinds`. */
class PlainJsonScan {
  private at = 0;
  private depth = 0;
  /** OBJECT or ARRAY for each open level (1 to depth). */
  private readonly kinds: Uint8Array;
  /** For each open object, whether it is the value of a `constructor` key. */
  private readonly constructors: Uint8Array;
  /** Whether the value about to be read is that of a `constructor` key. */
  private afterConstructorKey = false;
  /**
   * A text with no backslash and no control character (compact JSON, as most producers send it) has
   * strings that end at the next quote: found by the engine's fast search instead of a loop here.
   */
  private readonly noEscapesNorControls: boolean;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {
    this.kinds = new Uint8Array(maxDepth + 1);
    this.constructors = new Uint8Array(maxDepth + 1);
    this.noEscapesNorControls = !ESCAPE_OR_CONTROL.test(text);
  }

  acceptable(): boolean {
    this.skipSpace();
    for (;;) {
      if (this.value() === 'opened') continue;
      // After a value: a comma and the next member, the end of an array or object, or the end of the text.
      for (;;) {
        this.skipSpace();
        if (this.depth === 0) return this.at === this.text.length;
        const c = this.text.charCodeAt(this.at);
        const kind = this.kinds[this.depth];
        if (c === COMMA) {
          this.at++;
          this.skipSpace();
          if (kind === OBJECT) this.key();
          break;
        }
        if (c !== (kind === OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) throw NOT_PLAIN;
        this.at++;
        this.depth--;
      }
    }
  }

  /** Reads a value, or opens an array or object (and reads its first key): 'opened' when one is left open. */
  private value(): 'opened' | 'read' {
    const { text } = this;
    const c = text.charCodeAt(this.at);
    const ofConstructor = this.afterConstructorKey;
    this.afterConstructorKey = false;
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (this.depth === this.maxDepth) throw NOT_PLAIN;
      this.depth++;
      this.kinds[this.depth] = c === OPEN_OBJECT ? OBJECT : ARRAY;
      this.constructors[this.depth] = ofConstructor && c === OPEN_OBJECT ? 1 : 0;
      this.at++;
      this.skipSpace();
      const next = text.charCodeAt(this.at);
      if (next === (c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        this.at++;
        this.depth--;
        return 'read';
      }
      if (c === OPEN_OBJECT) this.key();
      return 'opened';
    }
    if (c === QUOTE) this.string();
    else if (c === MINUS || isDigit(c)) this.number();
    else if (!(this.word('true') || this.word('false') || this.word('null'))) throw NOT_PLAIN;
    return 'read';
  }

  /** A member's key and its colon; refuses the keys that reach a prototype. */
  private key(): void {
    if (this.text.charCodeAt(this.at) !== QUOTE) throw NOT_PLAIN;
    const start = this.at;
    const escaped = this.string();
    // Only keys of 9 or 11 characters can be one of the three read here; an escaped one is read as JSON.
    const length = this.at - start - 2;
    const key = escaped ? (JSON.parse(this.text.slice(start, this.at)) as string) : length === 9 || length === 11 ? this.text.slice(start + 1, this.at - 1) : '';
    if (key === '__proto__' || (key === 'prototype' && this.constructors[this.depth] === 1)) throw NOT_PLAIN;
    this.afterConstructorKey = key === 'constructor';
    this.skipSpace();
    if (this.text.charCodeAt(this.at) !== COLON) throw NOT_PLAIN;
    this.at++;
    this.skipSpace();
  }

  /** A string from its opening quote to past its closing one; true when it holds an escape. */
  private string(): boolean {
    const { text } = this;
    if (this.noEscapesNorControls) {
      const end = text.indexOf('"', this.at + 1);
      if (end < 0) throw NOT_PLAIN;
      this.at = end + 1;
      return false;
    }
    let escaped = false;
    this.at++;
    for (;;) {
      const c = text.charCodeAt(this.at);
      // Most characters: neither a quote, a backslash nor a control character (NaN past the end is none of them).
      if (c > BACKSLASH || (c >= SPACE && c !== QUOTE && c !== BACKSLASH)) {
        this.at++;
        continue;
      }
      if (c === QUOTE) {
        this.at++;
        return escaped;
      }
      if (c !== BACKSLASH) throw NOT_PLAIN; // a control character, or the end of the text
      escaped = true;
      const after = text.charCodeAt(this.at + 1);
      if (after === 0x75) {
        for (let i = 2; i < 6; i++) if (!isHex(text.charCodeAt(this.at + i))) throw NOT_PLAIN;
        this.at += 6;
      } else if (SIMPLE_ESCAPES.has(after)) this.at += 2;
      else throw NOT_PLAIN;
    }
  }

  /** `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` */
  private number(): void {
    const { text } = this;
    if (text.charCodeAt(this.at) === MINUS) this.at++;
    if (text.charCodeAt(this.at) === ZERO) this.at++;
    else this.digits();
    if (text.charCodeAt(this.at) === DOT) {
      this.at++;
      this.digits();
    }
    const e = text.charCodeAt(this.at);
    if (e === 0x65 || e === 0x45) {
      this.at++;
      const sign = text.charCodeAt(this.at);
      if (sign === 0x2b || sign === MINUS) this.at++;
      this.digits();
    }
  }

  /** One digit or more. */
  private digits(): void {
    if (!isDigit(this.text.charCodeAt(this.at))) throw NOT_PLAIN;
    do this.at++;
    while (isDigit(this.text.charCodeAt(this.at)));
  }

  private word(word: string): boolean {
    if (!this.text.startsWith(word, this.at)) return false;
    this.at += word.length;
    return true;
  }

  private skipSpace(): void {
    while (isSpace(this.text.charCodeAt(this.at))) this.at++;
  }
}
