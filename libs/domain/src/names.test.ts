import fc from 'fast-check';
import { GiError } from './errors';
import { assertName, isValidName } from './names';

describe('names of bots, entities, integrations, tokens and pools', () => {
  it('are 1 to 128 letters, digits, _ . -, starting with a letter or digit', () => {
    for (const name of ['a', 'Z', '7', 'acme', 'Order_v2.1-beta', `a${'_'.repeat(127)}`]) expect(isValidName(name)).toBe(true);
    for (const name of ['', '_a', '.a', '-a', `a${'b'.repeat(128)}`, 'a b', 'a/b', 'a%2F', 'é', 'a\n']) expect(isValidName(name)).toBe(false);
  });

  it('hold nothing that a URL path or a storage key would have to escape (property)', () => {
    // A name's first character, then name characters with those a URL or a path would have to escape among them.
    const rest = fc.string({ unit: fc.constantFrom(...'aZ9_.-%/?#& é+'), maxLength: 140 });
    fc.assert(
      fc.property(fc.constantFrom('a', 'Z', '9'), rest, (first, others) => {
        const name = first + others;
        if (isValidName(name)) expect(encodeURIComponent(name)).toBe(name);
      }),
    );
  });

  it('are refused with 400 naming the kind of name', () => {
    expect(assertName('botId', 'acme')).toBe('acme');
    let error: unknown;
    try {
      assertName('integrationId', 'no spaces');
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(GiError);
    expect((error as GiError).code).toBe('bad_request');
    expect((error as GiError).detail).toBe("integrationId must be 1-128 characters of letters, digits, '_', '.', '-' and start with a letter or digit.");
  });
});
