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
      EXECUTOR_CONCURRENCY: 64,
      IDEMPOTENCY_KEY_TTL_SECONDS: 24 * 3600,
    });
    expect(config.ADMIN_TOKEN).toBeUndefined();
  });

  it('reads the Idempotency-Key window in whole seconds, at least 1', () => {
    expect(parseServiceConfig({ IDEMPOTENCY_KEY_TTL_SECONDS: '3' }).IDEMPOTENCY_KEY_TTL_SECONDS).toBe(3);
    for (const value of ['0', '1.5', 'a day']) expect(() => parseServiceConfig({ IDEMPOTENCY_KEY_TTL_SECONDS: value })).toThrow(/IDEMPOTENCY_KEY_TTL_SECONDS/);
  });

  it('reads the sandbox worker threads between 1 and 64, unset by default', () => {
    expect(parseServiceConfig({}).SANDBOX_WORKERS).toBeUndefined();
    expect(parseServiceConfig({ SANDBOX_WORKERS: '1' }).SANDBOX_WORKERS).toBe(1);
    expect(parseServiceConfig({ SANDBOX_WORKERS: '64' }).SANDBOX_WORKERS).toBe(64);
    for (const value of ['0', '65', '1.5', 'two']) expect(() => parseServiceConfig({ SANDBOX_WORKERS: value })).toThrow(/SANDBOX_WORKERS/);
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

  it('reads the upload limits, part headers between 256 bytes and 16 KiB', () => {
    expect(parseServiceConfig({})).toMatchObject({
      MAX_FILE_SIZE: 100 * 1024 * 1024,
      MAX_FILES: 20,
      MAX_UPLOAD_SIZE: 200 * 1024 * 1024,
      MAX_FORM_FIELDS: 100,
      MAX_FIELD_SIZE: 1024 * 1024,
      MAX_PART_HEADER_SIZE: 8192,
    });
    expect(parseServiceConfig({ MAX_FILE_SIZE: '1gb', MAX_PART_HEADER_SIZE: '1kb' })).toMatchObject({ MAX_FILE_SIZE: 1024 ** 3, MAX_PART_HEADER_SIZE: 1024 });
    expect(() => parseServiceConfig({ MAX_PART_HEADER_SIZE: '32kb' })).toThrow(/MAX_PART_HEADER_SIZE: between 256b and 16kb/);
  });

  it('reads sizes with units', () => {
    expect(parseBytes('512kb')).toBe(524288);
    expect(parseBytes('2MB')).toBe(2 * 1024 * 1024);
    expect(parseBytes('100')).toBe(100);
  });
});
