import { CONNECTOR_LIMIT_BOUNDS, DEFAULT_CONNECTOR_LIMITS, MAX_TIMEOUT_SECONDS } from '@gi/domain';
import { integrationBody } from './control.schemas';

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
