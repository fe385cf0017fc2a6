import fc from 'fast-check';
import { CONNECTOR_LIMIT_BOUNDS, DEFAULT_CONNECTOR_LIMITS, isValidStepName, MAX_TIMEOUT_SECONDS } from '@gi/domain';
import { integrationBody, stepCursor, stepListQuery } from './control.schemas';

describe('integration settings', () => {
  const base = { entityName: 'Order', code: 'return 1' };

  it('fills every limit left out with its default', () => {
    expect(integrationBody.parse(base)).toMatchObject({ timeoutSeconds: 60, limits: DEFAULT_CONNECTOR_LIMITS });
    expect(integrationBody.parse({ ...base, limits: { memoryMiB: 16 } }).limits).toEqual({ ...DEFAULT_CONNECTOR_LIMITS, memoryMiB: 16 });
  });

  it('allows async runs of up to a day of wall time', () => {
    expect(integrationBody.parse({ ...base, timeoutSeconds: MAX_TIMEOUT_SECONDS }).timeoutSeconds).toBe(24 * 3600);
    expect(integrationBody.safeParse({ ...base, timeoutSeconds: MAX_TIMEOUT_SECONDS + 1 }).success).toBe(false);
  });

  it.each(Object.entries(CONNECTOR_LIMIT_BOUNDS))('accepts %s within its bounds and refuses it outside', (key, { min, max }) => {
    const parse = (value: unknown) => integrationBody.safeParse({ ...base, limits: { [key]: value } });
    expect(parse(min).success).toBe(true);
    expect(parse(max).success).toBe(true);
    for (const bad of [min - 1, max + 1, 1.5, '8', null]) {
      const result = parse(bad);
      expect(result.success).toBe(false);
      expect(result.error?.issues[0].path).toEqual(['limits', key]);
    }
  });

  it('refuses a limit it does not know', () => {
    const result = integrationBody.safeParse({ ...base, limits: { stackKiB: 10 } });
    expect(result.error?.issues[0]).toMatchObject({ path: ['limits'], code: 'unrecognized_keys' });
  });
});

describe('allowedHosts at deploy', () => {
  const base = { entityName: 'Order', code: 'return 1' };
  const problem = (allowedHosts: unknown) => {
    const result = integrationBody.safeParse({ ...base, allowedHosts });
    return result.success ? null : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  };

  it('accepts names, wildcards, ports and IP addresses as URLs write them', () => {
    expect(problem(['api.example.com', '*.example.com', 'api.example.com:8443', '*.example.com:443', '203.0.113.7', '[2001:db8::7]:8443'])).toBeNull();
  });

  it.each([
    ['https://api.example.com', "allowedHosts.0: 'https://api.example.com' has a scheme: write the host alone, without https://"],
    ['api.example.com/v1', "allowedHosts.0: 'api.example.com/v1' is not a host: give a host name, optionally with :port, without a path, query or credentials"],
    ['example..com', "allowedHosts.0: 'example..com' has an empty label (a dot at the start or two dots in a row)"],
    ['api.*.example.com', "allowedHosts.0: 'api.*.example.com' has a misplaced wildcard: it can only be the whole first label, as in *.example.com"],
    ['*.com', "allowedHosts.0: '*.com' allows a whole top-level domain: a wildcard needs at least two labels after it, as in *.example.com"],
    ['api.example.com:0', "allowedHosts.0: 'api.example.com:0' has an invalid port: it must be a number from 1 to 65535"],
    ['2001:db8::7', "allowedHosts.0: '2001:db8::7' is not a host: an IPv6 address goes in brackets, as in [2001:db8::7] or [2001:db8::7]:8443"],
    ['127.1', "allowedHosts.0: '127.1' is not written as URLs write it: use 127.0.0.1"],
    ['', 'allowedHosts.0: an empty entry allows nothing'],
  ])('refuses %j with a clear message', (entry, message) => {
    expect(problem([entry])).toBe(message);
  });
});

describe('the steps page cursor (nextBefore of GET .../invocations/{id}/steps)', () => {
  const parse = (before: unknown) => stepListQuery.safeParse({ before });
  // Names as a step may have them: 1 to 200 characters of any script, no control characters.
  const stepName = fc
    .string({ unit: fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }), fc.constantFrom('_', ' ', '1', '%', '&')), minLength: 1, maxLength: 60 })
    .filter(isValidStepName);

  it('reads back every step it was made from', () => {
    fc.assert(
      fc.property(stepName, fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (name, occurrence) => {
        expect(parse(stepCursor({ name, occurrence })).data?.before).toEqual({ name, occurrence });
      }),
    );
  });

  it('refuses anything else with a 400 message, never throwing', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 300 }), fc.anything()), (before) => {
        const parsed = parse(before);
        if (parsed.success) {
          const position = parsed.data.before;
          if (position === undefined) return expect(before).toBeUndefined();
          expect(isValidStepName(position.name) && position.occurrence >= 1).toBe(true);
          expect(stepCursor(position)).toBe(before);
        } else {
          expect(parsed.error.issues[0].path).toEqual(['before']);
        }
      }),
    );
  });
});
