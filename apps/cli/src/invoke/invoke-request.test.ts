import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseHeaderItems, parseQueryItems, readBody } from './invoke-request';

describe('invoke request options', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'gi-cli-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps query parameters in order with repeats and values containing =', () => {
    expect(parseQueryItems(['a=1', 'b', 'a=2', 'expr=x=y'])).toEqual([['a', '1'], ['b', ''], ['a', '2'], ['expr', 'x=y']]);
    expect(() => parseQueryItems(['=1'])).toThrow('--query "=1" must look like name=value');
  });

  it('parses headers and keeps Authorization and Content-Type to their own options', () => {
    expect(parseHeaderItems(['X-Trace: abc: def', 'X-Empty:'])).toEqual([['X-Trace', 'abc: def'], ['X-Empty', '']]);
    expect(() => parseHeaderItems(['no colon'])).toThrow("must look like 'Name: value'");
    expect(() => parseHeaderItems(['Authorization: Bearer x'])).toThrow('pass the bot token with --token');
    expect(() => parseHeaderItems(['content-type: text/plain'])).toThrow('use --content-type');
  });

  it('checks a JSON --body and sends text when told to', async () => {
    expect(await readBody({ body: '{"a":1}' })).toEqual({ body: Buffer.from('{"a":1}'), contentType: 'application/json' });
    await expect(readBody({ body: '{oops' })).rejects.toThrow('--body is not valid JSON');
    expect(await readBody({ body: 'plain words', contentType: 'text/plain' })).toMatchObject({ contentType: 'text/plain' });
    await expect(readBody({ body: 'x', bodyFile: 'y' })).rejects.toThrow('pass either --body or --body-file, not both');
    expect(await readBody({})).toEqual({});
  });

  it('reads --body-file and guesses its type from the extension', async () => {
    writeFileSync(join(dir, 'order.xml'), '<order id="1"/>');
    expect(await readBody({ bodyFile: join(dir, 'order.xml') })).toEqual({ body: Buffer.from('<order id="1"/>'), contentType: 'application/xml' });
    await expect(readBody({ bodyFile: join(dir, 'missing.json') })).rejects.toThrow(`--body-file: cannot read ${join(dir, 'missing.json')}: no such file`);
  });

  it("reads --body-file - from standard input, as JSON unless --content-type says otherwise", async () => {
    const readStdin = async () => Buffer.from('{"a":1}');
    expect(await readBody({ bodyFile: '-' }, { readStdin })).toEqual({ body: Buffer.from('{"a":1}'), contentType: 'application/json' });
    expect(await readBody({ bodyFile: '-', contentType: 'text/csv' }, { readStdin })).toMatchObject({ contentType: 'text/csv' });
    await expect(readBody({ bodyFile: '-' })).rejects.toThrow('--body-file - (standard input) is not available for this command');
  });
});
