import { SandboxError } from './host-module';
import { IntlFormatters, MAX_CACHED_FORMATTERS } from './intl-formatters';

describe('IntlFormatters', () => {
  const never = () => false;

  it(`keeps at most ${MAX_CACHED_FORMATTERS} formatters, and formats right after dropping them`, () => {
    const formatters = new IntlFormatters();
    const config = (i: number) => JSON.stringify([['de-DE'], { minimumFractionDigits: String(i % 21), maximumFractionDigits: '20', minimumIntegerDigits: String(1 + (Math.floor(i / 21) % 21)) }]);
    for (let i = 0; i < 441; i++) formatters.create('NumberFormat', config(i), false);
    expect(formatters.size).toBe(MAX_CACHED_FORMATTERS);
    for (let i = 0; i < 441; i += 37) {
      const options = JSON.parse(config(i))[1];
      expect(formatters.call('format', 'NumberFormat', config(i), 1.5, undefined, 0, never)).toBe(new Intl.NumberFormat('de-DE', options).format(1.5));
    }
    expect(formatters.size).toBe(MAX_CACHED_FORMATTERS);
  });

  it('does not keep formatters for long configurations', () => {
    const formatters = new IntlFormatters();
    const long = `en-x-${Array.from({ length: 600 }, (_, i) => `p${i}`).join('-')}`;
    expect(formatters.call('format', 'NumberFormat', JSON.stringify([[long], {}]), 1234, undefined, 0, never)).toBe('1,234');
    expect(formatters.size).toBe(0);
  });

  it('takes a configuration as untrusted text: anything but locales and string or boolean options is refused', () => {
    const formatters = new IntlFormatters();
    for (const config of ['nope', '[]', '[["en"]]', '[["en"],[]]', '[[1],{}]', '[["en"],{"style":{}}]', '[["en"],{"style":1}]']) {
      expect(() => formatters.create('NumberFormat', config, false)).toThrow(SandboxError);
    }
    expect(() => formatters.create('Intl', '[[],{}]', false)).toThrow(/no Intl/);
    for (const method of ['constructor', 'toString', '__proto__']) {
      expect(() => formatters.call(method, 'NumberFormat', '[[],{}]', undefined, undefined, 0, never)).toThrow(`Intl.NumberFormat has no method ${method}.`);
      expect(() => formatters.call('format', method, '[[],{}]', 1, undefined, 0, never)).toThrow(SandboxError);
    }
    expect(() => formatters.call('format', 'NumberFormat', '[[],{}]', {}, undefined, 0, never)).toThrow(/Invalid argument/);
  });
});
