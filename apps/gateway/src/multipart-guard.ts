/** Finds a byte sequence in a stream of chunks, also when it spans two chunks. */
class StreamSearch {
  private carry: Buffer;

  constructor(
    private readonly needle: Buffer,
    primed: Buffer = Buffer.alloc(0),
  ) {
    this.carry = primed;
  }

  /** The index in `chunk` just after the next match at or after `from` (it may start in earlier chunks), or -1. */
  next(chunk: Buffer, from: number): number {
    const n = this.needle.length;
    if (this.carry.length > 0) {
      const joined = Buffer.concat([this.carry, chunk.subarray(from, from + n - 1)]);
      const at = joined.indexOf(this.needle);
      if (at !== -1 && at < this.carry.length) {
        const end = from + at + n - this.carry.length;
        this.carry = Buffer.alloc(0);
        return end;
      }
    }
    const at = chunk.indexOf(this.needle, from);
    if (at !== -1) {
      this.carry = Buffer.alloc(0);
      return at + n;
    }
    const rest = chunk.subarray(from);
    this.carry = Buffer.from(rest.length >= n - 1 ? rest.subarray(rest.length - (n - 1)) : Buffer.concat([this.carry, rest]).subarray(-(n - 1)));
    return -1;
  }
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

export type GuardVerdict = 'ok' | 'header-too-large' | 'field-too-large';

export interface GuardLimits {
  /** Bytes of one part's header block. */
  maxHeaderBytes: number;
  /** Bytes of one non-file part's value. */
  maxFieldBytes: number;
}

/** What the parser treats as a file: a `filename` parameter, or an octet-stream part. */
function isFilePart(header: string): boolean {
  return /^content-disposition:[^\r\n]*;\s*filename\*?\s*=/im.test(header) || /^content-type:\s*application\/octet-stream\b/im.test(header);
}

/**
 * Follows the framing of a multipart body as it streams by, ahead of the parser, so two limits hold
 * the moment they are crossed: the size of a part's header block (the parser's own ceiling is a fixed
 * 16 KiB) and the size of a field's value (the parser would read a long field to its end before
 * saying it was cut). It only finds delimiters (`CRLF--boundary`) and the blank line ending a header.
 */
export class MultipartGuard {
  private state: 'body' | 'lead' | 'header' | 'done' = 'body';
  private lead = '';
  private header = '';
  private headerBytes = 0;
  private bodyBytes = 0;
  private bodyLimit = Number.POSITIVE_INFINITY;
  private readonly delimiter: StreamSearch;
  private readonly slack: number;
  private headerEnd = new StreamSearch(CRLFCRLF);

  constructor(
    boundary: string,
    private readonly limits: GuardLimits,
  ) {
    const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
    // The first delimiter has no CRLF before it: start as if one had just been read.
    this.delimiter = new StreamSearch(delimiter, Buffer.from('\r\n'));
    this.slack = delimiter.length - 1;
  }

  push(chunk: Buffer): GuardVerdict {
    let pos = 0;
    while (pos < chunk.length) {
      switch (this.state) {
        case 'done':
          return 'ok';
        case 'body': {
          const end = this.delimiter.next(chunk, pos);
          if (end === -1) {
            this.bodyBytes += chunk.length - pos;
            // The last bytes may be the start of a delimiter rather than the value.
            return this.bodyBytes - this.slack > this.bodyLimit ? 'field-too-large' : 'ok';
          }
          // Bytes of the delimiter counted with the previous chunk come off again here.
          this.bodyBytes += end - pos - (this.slack + 1);
          if (this.bodyBytes > this.bodyLimit) return 'field-too-large';
          pos = end;
          this.state = 'lead';
          this.lead = '';
          break;
        }
        case 'lead':
          // `--` right after a delimiter closes the body; what follows is an epilogue, not a part.
          this.lead += String.fromCharCode(chunk[pos++]);
          if (this.lead === '-') break;
          if (this.lead === '--') {
            this.state = 'done';
            return 'ok';
          }
          this.state = 'header';
          this.header = this.lead;
          this.headerBytes = this.lead.length;
          this.headerEnd = new StreamSearch(CRLFCRLF, Buffer.from(this.lead, 'latin1'));
          break;
        case 'header': {
          const end = this.headerEnd.next(chunk, pos);
          const stop = end === -1 ? chunk.length : end;
          this.headerBytes += stop - pos;
          if (this.headerBytes > this.limits.maxHeaderBytes) return 'header-too-large';
          this.header += chunk.toString('latin1', pos, stop);
          if (end === -1) return 'ok';
          pos = end;
          this.state = 'body';
          this.bodyBytes = 0;
          this.bodyLimit = isFilePart(this.header) ? Number.POSITIVE_INFINITY : this.limits.maxFieldBytes;
          break;
        }
      }
    }
    return 'ok';
  }
}
