import { ConfigError, parseBytes, parseServiceConfig } from './service-config';

describe('parseServiceConfig', () => {
  it('applies the documented defaults', () => {
    const config = parseServiceConfig({});
    expect(config).toMatchObject({
      PORT: 8080,
      DATA_DIR: './data',
      PLATFORM_SEGMENT: 'Platform',
      PLATFORM_VERSION: [9, 19],
      SYNC_TIMEOUT_SECONDS: 300,
      MAX_BODY_SIZE: 1024 * 1024,
      EXECUTOR_CONCURRENCY: 8,
    });
    expect(config.ADMIN_TOKEN).toBeUndefined();
  });

  it('lists every problem at once', () => {
    try {
      parseServiceConfig({ PORT: 'eighty', PLATFORM_VERSION: 'nine', TOKEN_SECRET: 'short', MAX_BODY_SIZE: 'huge' });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems.join('\n');
      for (const name of ['PORT', 'PLATFORM_VERSION', 'TOKEN_SECRET', 'MAX_BODY_SIZE']) expect(problems).toContain(name);
    }
  });

  it('treats empty values as unset', () => {
    expect(parseServiceConfig({ PORT: '', ADMIN_TOKEN: '' }).PORT).toBe(8080);
  });

  it('reads sizes with units', () => {
    expect(parseBytes('512kb')).toBe(524288);
    expect(parseBytes('2MB')).toBe(2 * 1024 * 1024);
    expect(parseBytes('100')).toBe(100);
  });
});
