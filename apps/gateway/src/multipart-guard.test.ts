import { MultipartGuard } from './multipart-guard';
import type { GuardLimits, GuardVerdict } from './multipart-guard';

const boundary = 'XyZ123';
const part = (headers: string, body: string) => `--${boundary}\r\n${headers}\r\n\r\n${body}\r\n`;
const form = (...parts: string[]) => Buffer.from(`${parts.join('')}--${boundary}--\r\n`, 'latin1');
const field = (name: string) => `Content-Disposition: form-data; name="${name}"`;
const file = (name: string, filename: string) => `Content-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: text/plain`;
const roomy: GuardLimits = { maxHeaderBytes: 1000, maxFieldBytes: 1000 };

/** Feeds `data` in pieces of `size` bytes: the first verdict other than ok and the byte offset where that piece ended. */
function feed(data: Buffer, limits: GuardLimits, size: number): { verdict: GuardVerdict; at: number } {
  const guard = new MultipartGuard(boundary, limits);
  for (let i = 0; i < data.length; i += size) {
    const verdict = guard.push(data.subarray(i, i + size));
    if (verdict !== 'ok') return { verdict, at: Math.min(i + size, data.length) };
  }
  return { verdict: 'ok', at: data.length };
}

describe('MultipartGuard', () => {
  const data = form(part(field('a'), 'value'), part(file('f', 'x'.repeat(300)), 'file body '.repeat(200)), part(field('b'), ''));

  it('lets a body within the limits through, however it is split into chunks', () => {
    for (let size = 1; size <= 40; size++) expect(feed(data, { maxHeaderBytes: 400, maxFieldBytes: 5 }, size).verdict).toBe('ok');
    expect(feed(data, { maxHeaderBytes: 400, maxFieldBytes: 5 }, data.length).verdict).toBe('ok');
  });

  it('stops as soon as a header block passes the limit', () => {
    const limitByte = data.indexOf('Content-Disposition: form-data; name="f"') + 200;
    for (const size of [1, 7, 64, data.length]) {
      const { verdict, at } = feed(data, { maxHeaderBytes: 200, maxFieldBytes: 1000 }, size);
      expect(verdict).toBe('header-too-large');
      expect(at).toBeLessThan(limitByte + size + 2);
    }
  });

  it('stops as soon as a field value passes the limit, long before the field ends', () => {
    const long = form(part(field('big'), 'v'.repeat(100_000)));
    const valueStart = long.indexOf('vvv');
    for (const size of [1, 100, 4096]) {
      const { verdict, at } = feed(long, { maxHeaderBytes: 1000, maxFieldBytes: 1000 }, size);
      expect(verdict).toBe('field-too-large');
      expect(at - valueStart).toBeLessThanOrEqual(1000 + boundary.length + 4 + size);
    }
    // A value of exactly the limit is fine; one byte more is not.
    expect(feed(form(part(field('x'), 'v'.repeat(1000))), roomy, 1).verdict).toBe('ok');
    expect(feed(form(part(field('x'), 'v'.repeat(1001))), roomy, 1).verdict).toBe('field-too-large');
    expect(feed(form(part(field('x'), 'v'.repeat(1001))), roomy, 100_000).verdict).toBe('field-too-large');
  });

  it('leaves the size of files to the parser, also octet-stream parts without a file name', () => {
    const octets = 'Content-Disposition: form-data; name="blob"\r\nContent-Type: application/octet-stream';
    const big = form(part(file('f', 'a.txt'), 'x'.repeat(50_000)), part(octets, 'y'.repeat(50_000)));
    expect(feed(big, roomy, 333).verdict).toBe('ok');
  });

  it('does not count file bytes that look like headers, nor the epilogue', () => {
    const body = 'Header: value\r\n'.repeat(100);
    const withEpilogue = Buffer.concat([form(part(file('f', 'h.txt'), body)), Buffer.from('epilogue '.repeat(300))]);
    for (const size of [1, 13, withEpilogue.length]) expect(feed(withEpilogue, { maxHeaderBytes: 100, maxFieldBytes: 10 }, size).verdict).toBe('ok');
  });

  it('measures a header block that never ends', () => {
    expect(feed(Buffer.from(`--${boundary}\r\n${'A'.repeat(10_000)}`), roomy, 512).verdict).toBe('header-too-large');
  });
});
