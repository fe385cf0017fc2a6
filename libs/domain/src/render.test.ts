import { XMLParser } from 'fast-xml-parser';
import { parseResponseContentType, renderResponseBody } from './render';
import { defaultResponseContentType, parsePlatformVersion, supportsAsync, supportsFileTransfer } from './versions';

describe('renderResponseBody', () => {
  it('renders JSON, with {} for a missing body', () => {
    expect(renderResponseBody({ Status: 'Accepted' }, 'application/json')).toEqual({ contentType: 'application/json; charset=utf-8', payload: '{"Status":"Accepted"}' });
    expect(renderResponseBody(undefined, 'application/json').payload).toBe('{}');
    expect(renderResponseBody(null, 'application/json').payload).toBe('{}');
    expect(renderResponseBody('text', 'application/json').payload).toBe('"text"');
  });

  it('renders text: strings verbatim, other values as JSON text, missing as empty', () => {
    expect(renderResponseBody('OK', 'text/plain')).toEqual({ contentType: 'text/plain; charset=utf-8', payload: 'OK' });
    expect(renderResponseBody({ a: 1 }, 'text/csv').payload).toBe('{"a":1}');
    expect(renderResponseBody(undefined, 'text/plain').payload).toBe('');
  });

  it('renders XML: strings verbatim, objects converted with one root element', () => {
    expect(renderResponseBody('<r>1</r>', 'application/xml').payload).toBe('<r>1</r>');
    const single = renderResponseBody({ Order: { Id: 7, Lines: ['a', 'b'] } }, 'text/xml');
    expect(single.contentType).toBe('text/xml; charset=utf-8');
    expect(new XMLParser().parse(single.payload)).toMatchObject({ Order: { Id: 7, Lines: ['a', 'b'] } });
    const wrapped = renderResponseBody({ Status: 'Accepted', Message: 'a < b & c' }, 'application/xml');
    expect(new XMLParser().parse(wrapped.payload)).toMatchObject({ Response: { Status: 'Accepted', Message: 'a < b & c' } });
    expect(wrapped.payload).toContain('a &lt; b &amp; c');
    expect(renderResponseBody(undefined, 'application/xml').payload).toBe('');
  });

  it('renders as XML a ResponseBody nested as deeply as a connector may return it', () => {
    let body: unknown = 'leaf';
    for (let i = 0; i < 1000; i++) body = [{ a: body }];
    const rendered = renderResponseBody(body, 'application/xml');
    expect(rendered.payload.startsWith('<?xml version="1.0" encoding="UTF-8"?><Response><item><a><a>')).toBe(true);
    expect(rendered.payload).toContain('leaf');
  });

  it('renders a structured +xml type as XML, and names a charset for text and XML types only', () => {
    const atom = renderResponseBody({ Feed: { Title: 'orders' } }, 'application/atom+xml');
    expect(atom.contentType).toBe('application/atom+xml; charset=utf-8');
    expect(new XMLParser().parse(atom.payload)).toMatchObject({ Feed: { Title: 'orders' } });
    expect(renderResponseBody('raw', 'application/octet-stream')).toEqual({ contentType: 'application/octet-stream', payload: 'raw' });
  });

  it('validates responseContentType', () => {
    expect(parseResponseContentType('Text/Plain; charset=utf-8')).toBe('text/plain');
    expect(() => parseResponseContentType('not a type')).toThrow('media type');
  });

  it('quotes an invalid responseContentType cut to 60 characters', () => {
    expect(() => parseResponseContentType('x'.repeat(100))).toThrow(`not '${'x'.repeat(60)}'.`);
  });
});

describe('platform versions', () => {
  const v = (text: string) => parsePlatformVersion(text)!;
  it('follows the spec table', () => {
    expect(supportsAsync(v('9.9'))).toBe(false);
    expect(supportsAsync(v('9.10'))).toBe(true);
    expect(supportsFileTransfer(v('9.18'))).toBe(false);
    expect(supportsFileTransfer(v('9.19'))).toBe(true);
    expect(supportsFileTransfer(v('10.0'))).toBe(true);
    expect(defaultResponseContentType(v('9.16'), 'sync')).toBe('text/plain');
    expect(defaultResponseContentType(v('9.16'), 'async')).toBe('application/json');
    expect(defaultResponseContentType(v('9.17'), 'sync')).toBe('application/json');
    expect(parsePlatformVersion('9')).toBeNull();
    // The major version decides first: 8.20 is before 9.10.
    expect(supportsAsync(v('8.20'))).toBe(false);
  });

  it('reads a version of two numbers, trimmed, and nothing around it', () => {
    expect(parsePlatformVersion(' 9.10 ')).toEqual([9, 10]);
    for (const text of ['v9.10', '9.10.1', '9.10x', '9.', '.10']) expect(parsePlatformVersion(text)).toBeNull();
  });
});
