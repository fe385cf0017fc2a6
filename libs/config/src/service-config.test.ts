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

  it('reads the secrets key as 32 bytes in base64, the previous one only beside a current one', () => {
    const key = Buffer.alloc(32, 9).toString('base64');
    expect(parseServiceConfig({ SECRETS_KEY: key }).SECRETS_KEY).toBe(key);
    expect(parseServiceConfig({}).SECRETS_KEY).toBeUndefined();
    expect(() => parseServiceConfig({ SECRETS_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/SECRETS_KEY: 32 random bytes in base64/);
    expect(() => parseServiceConfig({ SECRETS_KEY_PREVIOUS: key })).toThrow(/SECRETS_KEY_PREVIOUS: set only during a key rotation/);
  });

  it('refuses a fault hook unless ALLOW_FAULT_INJECTION=true, naming the variable to unset', () => {
    for (const hook of ['gateway-exit-after-persist', 'executor-crash-in-run']) {
      expect(() => parseServiceConfig({ FAULT_INJECTION: hook })).toThrow(new RegExp(`FAULT_INJECTION: ${hook} .*for recovery tests only; unset it`));
      expect(() => parseServiceConfig({ FAULT_INJECTION: hook, ALLOW_FAULT_INJECTION: 'false' })).toThrow(ConfigError);
      expect(parseServiceConfig({ FAULT_INJECTION: hook, ALLOW_FAULT_INJECTION: 'true' }).FAULT_INJECTION).toBe(hook);
    }
    expect(parseServiceConfig({ ALLOW_FAULT_INJECTION: 'true' }).FAULT_INJECTION).toBeUndefined();
    expect(parseServiceConfig({}).ALLOW_FAULT_INJECTION).toBe(false);
    expect(() => parseServiceConfig({ ALLOW_FAULT_INJECTION: 'yes' })).toThrow(/ALLOW_FAULT_INJECTION: true or false/);
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

  it('reads when a SQLite commit is on disk: normal by default, or full, and nothing else', () => {
    expect(parseServiceConfig({}).SQLITE_SYNCHRONOUS).toBe('normal');
    expect(parseServiceConfig({ SQLITE_SYNCHRONOUS: 'full' }).SQLITE_SYNCHRONOUS).toBe('full');
    expect(parseServiceConfig({ SQLITE_SYNCHRONOUS: 'normal' }).SQLITE_SYNCHRONOUS).toBe('normal');
    for (const value of ['off', 'extra', '2', 'FULLY']) expect(() => parseServiceConfig({ SQLITE_SYNCHRONOUS: value })).toThrow(/SQLITE_SYNCHRONOUS: normal or full/);
  });

  it('reads the drain deadline in whole seconds, 20 by default (below a 30 s grace period), 0 to hand back at once', () => {
    expect(parseServiceConfig({}).DRAIN_DEADLINE_SECONDS).toBe(20);
    expect(parseServiceConfig({ DRAIN_DEADLINE_SECONDS: '0' }).DRAIN_DEADLINE_SECONDS).toBe(0);
    expect(parseServiceConfig({ DRAIN_DEADLINE_SECONDS: '100' }).DRAIN_DEADLINE_SECONDS).toBe(100);
    for (const value of ['-1', '1.5', 'soon', '86401']) expect(() => parseServiceConfig({ DRAIN_DEADLINE_SECONDS: value })).toThrow(/DRAIN_DEADLINE_SECONDS/);
  });

  it('reads the free disk readiness asks for as a size, 64 MiB by default, 0 for no check', () => {
    expect(parseServiceConfig({}).READY_MIN_FREE_DISK).toBe(64 * 1024 ** 2);
    expect(parseServiceConfig({ READY_MIN_FREE_DISK: '0' }).READY_MIN_FREE_DISK).toBe(0);
    expect(parseServiceConfig({ READY_MIN_FREE_DISK: '1gb' }).READY_MIN_FREE_DISK).toBe(1024 ** 3);
    for (const value of ['-1mb', 'lots', '5 tb']) expect(() => parseServiceConfig({ READY_MIN_FREE_DISK: value })).toThrow(/READY_MIN_FREE_DISK/);
  });

  it('reads the heap growth between full collections in percent, 100 by default, 0 for V8\'s own', () => {
    expect(parseServiceConfig({}).HEAP_GROWTH_PERCENT).toBe(100);
    expect(parseServiceConfig({ HEAP_GROWTH_PERCENT: '0' }).HEAP_GROWTH_PERCENT).toBe(0);
    expect(parseServiceConfig({ HEAP_GROWTH_PERCENT: '200' }).HEAP_GROWTH_PERCENT).toBe(200);
    for (const value of ['-1', '1001', '1.5', 'lots']) expect(() => parseServiceConfig({ HEAP_GROWTH_PERCENT: value })).toThrow(/HEAP_GROWTH_PERCENT/);
  });

  it('reads trusted addresses as IP addresses and refuses what a socket would not read as one', () => {
    expect(parseServiceConfig({ CALLBACK_TRUSTED_ADDRESSES: '127.0.0.1, ::1', CONNECTOR_TRUSTED_ADDRESSES: '::ffff:127.0.0.1' })).toMatchObject({
      CALLBACK_TRUSTED_ADDRESSES: ['127.0.0.1', '::1'],
      CONNECTOR_TRUSTED_ADDRESSES: ['::ffff:127.0.0.1'],
    });
    for (const value of ['127.1', '0x7f.1', '2130706433', '127.0.0.1,', ':::1', 'fe80::1%eth0', 'localhost']) {
      expect(() => parseServiceConfig({ CALLBACK_TRUSTED_ADDRESSES: value })).toThrow(/CALLBACK_TRUSTED_ADDRESSES: comma-separated IP addresses/);
      expect(() => parseServiceConfig({ CONNECTOR_TRUSTED_ADDRESSES: value })).toThrow(/CONNECTOR_TRUSTED_ADDRESSES: comma-separated IP addresses/);
    }
  });

  it('reads the JSON depth limit and the slow-client timeouts, with sane defaults', () => {
    expect(parseServiceConfig({})).toMatchObject({
      MAX_JSON_DEPTH: 64,
      HEADERS_TIMEOUT_SECONDS: 10,
      BODY_IDLE_TIMEOUT_SECONDS: 10,
      BODY_TIMEOUT_SECONDS: 60,
      UPLOAD_TIMEOUT_SECONDS: 1800,
    });
    expect(parseServiceConfig({ MAX_JSON_DEPTH: '100', BODY_IDLE_TIMEOUT_SECONDS: '1' })).toMatchObject({ MAX_JSON_DEPTH: 100, BODY_IDLE_TIMEOUT_SECONDS: 1 });
    for (const [name, value] of [['MAX_JSON_DEPTH', '0'], ['MAX_JSON_DEPTH', '1001'], ['HEADERS_TIMEOUT_SECONDS', '0'], ['BODY_TIMEOUT_SECONDS', '1.5'], ['UPLOAD_TIMEOUT_SECONDS', 'long']]) {
      expect(() => parseServiceConfig({ [name]: value })).toThrow(new RegExp(name));
    }
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

  it('takes a body size up to the 4 MiB an invocation keeps of its request', () => {
    expect(parseServiceConfig({ MAX_BODY_SIZE: '4mb' }).MAX_BODY_SIZE).toBe(4 * 1024 * 1024);
    expect(() => parseServiceConfig({ MAX_BODY_SIZE: '5mb' })).toThrow('MAX_BODY_SIZE: at most 4mb (an invocation keeps its request within 4 MiB)');
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
