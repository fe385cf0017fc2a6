import fc from 'fast-check';
import { GiError } from '@gi/domain';
import { FormFields } from './form-fields';
import { MultipartGuard } from './multipart-guard';
import type { GuardVerdict } from './multipart-guard';
import { parsePrefer } from './prefer';

/**
 * Property-based fuzzing of the gateway's own parsers of what a caller sends: the Prefer header, the
 * multipart guard that follows an upload's framing, and the form fields that become RequestBody.
 */

/** A header value of up to 16 KiB (Node's limit for all headers) repeating a short pattern of the characters parsers look at. */
const adversarial = (alphabet: string[]) =>
  fc.array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: 4 }).map((pattern) => pattern.join('').repeat(Math.ceil(16 * 1024 / pattern.length)).slice(0, 16 * 1024));

const elapsedMs = (run: () => unknown) => {
  const started = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - started) / 1e6;
};

describe('parsePrefer (Prefer header)', () => {
  it('reads any header without throwing; a wait it honours is a whole number of seconds within a day', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ unit: fc.constantFrom('"', '\\', ',', ';', '=', ' ', 'w', 'a', 'i', 't', '1') })), (header) => {
        const { respondAsync, waitSeconds } = parsePrefer(header);
        expect(typeof respondAsync).toBe('boolean');
        if (waitSeconds !== undefined) expect(Number.isInteger(waitSeconds) && waitSeconds >= 0 && waitSeconds <= 86_400).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('reads back what a client writes: respond-async and wait=N, in any order, with other preferences around', () => {
    const other = fc.constantFrom('return=minimal', 'handling=lenient', 'foo="a,b;c"', 'x');
    const written = fc
      .tuple(fc.boolean(), fc.option(fc.integer({ min: 0, max: 86_400 }), { nil: undefined }), fc.array(other, { maxLength: 3 }))
      .chain(([async, wait, others]) => {
        const parts = [...others, ...(async ? ['respond-async'] : []), ...(wait === undefined ? [] : [`wait=${wait}`])];
        return fc.shuffledSubarray(parts, { minLength: parts.length, maxLength: parts.length }).map((order) => ({ async, wait, header: order.join(', ') }));
      });
    fc.assert(
      fc.property(written, ({ async, wait, header }) => {
        expect(parsePrefer(header)).toEqual({ respondAsync: async, ...(wait === undefined ? {} : { waitSeconds: wait }) });
        // The first of a preference given twice counts: repeating the header changes nothing.
        expect(parsePrefer(`${header}, ${header}`)).toEqual(parsePrefer(header));
      }),
      { numRuns: 500 },
    );
  });

  it('takes time linear in the header: 16 KiB of any repeated pattern in well under 50 ms', () => {
    fc.assert(
      fc.property(adversarial(['"', '\\', ',', ';', '=', 'a', ' ']), (header) => {
        // The best of three: backtracking is slow every time, a collection or a busy machine once.
        expect(Math.min(elapsedMs(() => parsePrefer(header)), elapsedMs(() => parsePrefer(header)), elapsedMs(() => parsePrefer(header)))).toBeLessThan(50);
      }),
      { numRuns: 200 },
    );
  });
});

describe('MultipartGuard', () => {
  const BOUNDARY = 'b0UnD-ary';
  const name = fc.stringMatching(/^[a-z]{1,8}$/);
  const part = fc.oneof(
    fc.record({ kind: fc.constant('field'), name, value: fc.string({ unit: 'binary-ascii', maxLength: 300 }) }),
    fc.record({ kind: fc.constant('file'), name, value: fc.string({ unit: 'binary-ascii', maxLength: 3000 }), padding: fc.nat({ max: 600 }) }),
  );
  const bodyOf = (parts: Array<{ kind: string; name: string; value: string; padding?: number }>) =>
    Buffer.from(
      parts
        .map(({ kind, name: partName, value, padding }) =>
          kind === 'file'
            ? `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${partName}"; filename="f.bin"\r\nContent-Type: application/octet-stream\r\nX-Pad: ${'p'.repeat(padding ?? 0)}\r\n\r\n${value}\r\n`
            : `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${partName}"\r\n\r\n${value}\r\n`,
        )
        .join('') + `--${BOUNDARY}--\r\n`,
      'latin1',
    );
  const limits = fc.record({ maxHeaderBytes: fc.integer({ min: 64, max: 800 }), maxFieldBytes: fc.integer({ min: 0, max: 300 }) });

  /** The first verdict other than ok, feeding `body` cut at `cuts`. */
  function verdictOf(body: Buffer, guardLimits: { maxHeaderBytes: number; maxFieldBytes: number }, cuts: number[]): GuardVerdict {
    const guard = new MultipartGuard(BOUNDARY, guardLimits);
    let from = 0;
    for (const cut of [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((a, b) => a - b).concat(body.length)) {
      const verdict = guard.push(body.subarray(from, cut));
      from = cut;
      if (verdict !== 'ok') return verdict;
    }
    return 'ok';
  }

  it('reaches the same verdict however the body is cut into chunks', () => {
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 5 }), limits, fc.array(fc.nat(), { maxLength: 30 }), (parts, guardLimits, cuts) => {
        const body = bodyOf(parts);
        expect(verdictOf(body, guardLimits, cuts)).toBe(verdictOf(body, guardLimits, []));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses exactly the bodies with a field over its limit or a part header block over its limit', () => {
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 5 }), limits, (parts, guardLimits) => {
        const body = bodyOf(parts);
        const verdict = verdictOf(body, guardLimits, []);
        const firstBreach = parts
          .map((p) => {
            const { kind, name: partName, value } = p;
            const padding = 'padding' in p ? p.padding : 0;
            const header = kind === 'file' ? `Content-Disposition: form-data; name="${partName}"; filename="f.bin"\r\nContent-Type: application/octet-stream\r\nX-Pad: ${'p'.repeat(padding ?? 0)}\r\n\r\n` : `Content-Disposition: form-data; name="${partName}"\r\n\r\n`;
            // The block counted runs from the line break after the boundary to the blank line.
            if (header.length + 2 > guardLimits.maxHeaderBytes) return 'header-too-large';
            if (kind === 'field' && value.length > guardLimits.maxFieldBytes) return 'field-too-large';
            return null;
          })
          .find((breach) => breach !== null);
        expect(verdict).toBe(firstBreach ?? 'ok');
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on bytes that are not multipart at all', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), fc.array(fc.nat(), { maxLength: 10 }), (bytes, cuts) => {
        verdictOf(Buffer.from(bytes), { maxHeaderBytes: 100, maxFieldBytes: 100 }, cuts);
      }),
      { numRuns: 500 },
    );
  });
});

describe('FormFields (RequestBody of a file transfer)', () => {
  const mimeType = fc.constantFrom('text/plain', 'application/json', 'application/vnd.x+json', 'APPLICATION/JSON', 'application/octet-stream');

  it('takes any field or refuses it with 400; a field name maps to its value, or to all its values in order', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.oneof(fc.constantFrom('', '__proto__', 'constructor', 'a'), fc.string({ maxLength: 6 })), fc.string({ unit: 'binary', maxLength: 50 }), mimeType), { maxLength: 8 }), (fields) => {
        const form = new FormFields(64);
        const kept: Array<[string, unknown]> = [];
        for (const [fieldName, value, type] of fields) {
          try {
            form.add(fieldName, value, type);
            kept.push([fieldName, /json/i.test(type) ? JSON.parse(value) : value]);
          } catch (error) {
            if (!(error instanceof GiError) || error.code !== 'bad_request') throw error;
          }
        }
        const expected: Record<string, unknown> = {};
        for (const [fieldName, value] of kept) {
          const values = kept.filter(([n]) => n === fieldName).map(([, v]) => v);
          expected[fieldName] = values.length === 1 ? value : values;
        }
        expect(form.toRequestBody()).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });
});
