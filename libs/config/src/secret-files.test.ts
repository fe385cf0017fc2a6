import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSecretKey } from '@gi/domain';
import { embeddedSecretsKey, embeddedSecretsKeyPath, userConfigDir } from './secret-files';

describe('the SECRETS_KEY an embedded deployment generates', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gi-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("is generated once into the user's configuration directory (0600, its directory 0700), then read back", () => {
    const env = { XDG_CONFIG_HOME: join(dir, 'config') };
    const first = embeddedSecretsKey({}, env);
    expect(first).toMatchObject({ path: join(dir, 'config', 'generic-integration', 'secrets-key'), created: true });
    expect(parseSecretKey(first.value)).toHaveLength(32);
    expect(statSync(first.path as string).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'config', 'generic-integration')).mode & 0o777).toBe(0o700);
    expect(embeddedSecretsKey({}, env)).toEqual({ value: first.value, path: first.path, created: false });
  });

  it('is not generated when SECRETS_KEY is set: the configured key wins', () => {
    const env = { XDG_CONFIG_HOME: join(dir, 'config') };
    expect(embeddedSecretsKey({ SECRETS_KEY: 'configured' }, env)).toEqual({ value: 'configured', path: null, created: false });
    expect(() => readFileSync(embeddedSecretsKeyPath(env))).toThrow(/ENOENT/);
  });

  it('reads the key another process wrote first', () => {
    const env = { XDG_CONFIG_HOME: dir };
    const path = embeddedSecretsKeyPath(env);
    embeddedSecretsKey({}, env);
    writeFileSync(path, 'written-by-another-process\n');
    expect(embeddedSecretsKey({}, env).value).toBe('written-by-another-process');
  });

  it('lies in each platform\'s configuration directory, never under DATA_DIR', () => {
    expect(userConfigDir({ XDG_CONFIG_HOME: '/x/cfg' }, 'linux', '/home/ada')).toBe('/x/cfg');
    expect(userConfigDir({ XDG_CONFIG_HOME: 'relative' }, 'linux', '/home/ada')).toBe('/home/ada/.config');
    expect(userConfigDir({}, 'linux', '/home/ada')).toBe('/home/ada/.config');
    expect(userConfigDir({}, 'darwin', '/Users/ada')).toBe('/Users/ada/Library/Application Support');
    expect(userConfigDir({ APPDATA: 'C:\\Users\\ada\\AppData\\Roaming' }, 'win32', 'C:\\Users\\ada')).toBe('C:\\Users\\ada\\AppData\\Roaming');
  });
});
