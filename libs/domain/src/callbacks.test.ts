import fc from 'fast-check';
import { assertCanSignCallbacks, callbackRetryDelayMs, callbackUrlProblem, MAX_CALLBACK_URL_LENGTH, parseCallbackHeader } from './callbacks';
import { GiError } from './errors';

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error as GiError;
  }
  throw new Error('not refused');
};

describe('callback URLs', () => {
  it('accept http and https URLs, up to the length limit', () => {
    expect(callbackUrlProblem('https://hooks.example.com/done?x=1')).toBeNull();
    expect(callbackUrlProblem('http://10.0.0.7:8080/cb')).toBeNull();
    const longest = `https://hooks.example.com/${'a'.repeat(MAX_CALLBACK_URL_LENGTH - 26)}`;
    expect(longest).toHaveLength(MAX_CALLBACK_URL_LENGTH);
    expect(callbackUrlProblem(longest)).toBeNull();
    expect(callbackUrlProblem(`${longest}a`)).toBe('it is longer than 2048 characters');
  });

  it('name what is wrong with the others', () => {
    expect(callbackUrlProblem('/relative/path')).toBe('it is not an absolute URL');
    expect(callbackUrlProblem('ftp://files.example.com/x')).toBe('only http and https URLs can receive callbacks');
    expect(callbackUrlProblem('javascript:alert(1)')).toBe('only http and https URLs can receive callbacks');
    expect(callbackUrlProblem('https://user@hooks.example.com/')).toBe('it must not carry credentials');
    expect(callbackUrlProblem('https://:secret@hooks.example.com/')).toBe('it must not carry credentials');
    expect(callbackUrlProblem('https://hooks.example.com:0/')).toBe('port 0 is not a port a receiver can listen on');
  });

  it('are taken from a Callback-Url header sent once, trimmed', () => {
    expect(parseCallbackHeader(['  https://hooks.example.com/done \t'])).toBe('https://hooks.example.com/done');
    expect(refusal(() => parseCallbackHeader([])).detail).toBe('The Callback-Url header may be sent only once.');
    const twice = refusal(() => parseCallbackHeader(['https://a.example/', 'https://b.example/']));
    expect([twice.code, twice.detail]).toEqual(['bad_request', 'The Callback-Url header may be sent only once.']);
    const wrong = refusal(() => parseCallbackHeader(['ftp://a.example/']));
    expect([wrong.code, wrong.detail]).toEqual(['bad_request', 'The Callback-Url header cannot be used: only http and https URLs can receive callbacks.']);
  });
});

describe('callback retries', () => {
  it('wait the base, then 4 times longer per attempt, between half of that and all of it', () => {
    expect(callbackRetryDelayMs(1, 1000, () => 0)).toBe(500);
    expect(callbackRetryDelayMs(1, 1000, () => 1)).toBe(1000);
    expect(callbackRetryDelayMs(2, 1000, () => 0.5)).toBe(3000);
    expect(callbackRetryDelayMs(3, 1000, () => 1)).toBe(16_000);
    expect(callbackRetryDelayMs(3, 1001, () => 0.3)).toBe(10_410);
  });

  it('wait at most an hour, however many attempts were made', () => {
    expect(callbackRetryDelayMs(20, 1000, () => 1)).toBe(3_600_000);
    expect(callbackRetryDelayMs(20, 1000, () => 0)).toBe(1_800_000);
  });

  it('stay within half and all of the ceiling for any draw (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 60_000 }), fc.double({ min: 0, max: 1, noNaN: true }), (attempt, base, draw) => {
        const ceiling = Math.min(3_600_000, base * 4 ** (attempt - 1));
        const delay = callbackRetryDelayMs(attempt, base, () => draw);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
        expect(delay).toBeLessThanOrEqual(Math.ceil(ceiling));
        expect(Number.isInteger(delay)).toBe(true);
      }),
    );
  });
});

describe('callbacks need a signing secret', () => {
  const catalog = (secrets: number) => ({
    getSigningSecrets: jest.fn(async () => Array.from({ length: secrets }, () => ({ secret: 'whsec_x', createdAt: 0, expiresAt: null }))),
  });

  it('are accepted once the bot has one, asked as of now', async () => {
    const store = catalog(1);
    await expect(assertCanSignCallbacks(store, 'acme', 1234, 'create one')).resolves.toBeUndefined();
    expect(store.getSigningSecrets).toHaveBeenCalledWith('acme', 1234);
  });

  it('are refused before, with the remedy', async () => {
    const error = await assertCanSignCallbacks(catalog(0), 'acme', 1234, 'run gi signing-secret rotate --bot acme').catch((thrown: GiError) => thrown);
    expect(error).toBeInstanceOf(GiError);
    expect([error?.code, error?.detail]).toEqual([
      'bad_request',
      "Callbacks are signed with the bot's signing secret, and bot 'acme' has none yet; run gi signing-secret rotate --bot acme.",
    ]);
  });
});
