import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/**
 * A secret kept in a file: read when present, otherwise generated once (32 random bytes, base64url) and
 * written with mode 0600, its directory made when missing (`dirMode`). A process that loses the race to
 * create it reads the one the winner wrote.
 */
export function loadOrCreateKeyFile(path: string, dirMode?: number): { value: string; path: string; created: boolean } {
  const read = (): string | null => {
    try {
      return readFileSync(path, 'utf8').trim() || null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return null;
    }
  };
  const existing = read();
  if (existing) return { value: existing, path, created: false };
  mkdirSync(dirname(path), { recursive: true, ...(dirMode !== undefined && { mode: dirMode }) });
  const value = randomBytes(32).toString('base64url');
  try {
    writeFileSync(path, `${value}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    const written = (error as NodeJS.ErrnoException).code === 'EEXIST' ? read() : null;
    if (written) return { value: written, path, created: false };
    throw error;
  }
  return { value, path, created: true };
}

/**
 * A secret kept in a file under the data directory: read when present, otherwise generated once and
 * written with mode 0600. Used for the admin token and the token-signing secret when not configured.
 */
export function loadOrCreateSecret(dataDir: string, fileName: string): { value: string; path: string; created: boolean } {
  return loadOrCreateKeyFile(resolve(join(dataDir, fileName)));
}

/**
 * The user's configuration directory: `$XDG_CONFIG_HOME` (else `~/.config`) on Linux and other Unixes,
 * `~/Library/Application Support` on macOS, `%APPDATA%` on Windows.
 */
export function userConfigDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform, home: string = homedir()): string {
  if (platform === 'win32') return env.APPDATA || join(home, 'AppData', 'Roaming');
  if (platform === 'darwin') return join(home, 'Library', 'Application Support');
  const xdg = env.XDG_CONFIG_HOME;
  return xdg && isAbsolute(xdg) ? xdg : join(home, '.config');
}

/**
 * Where the embedded deployment keeps the SECRETS_KEY it generates when none is configured: the user's
 * configuration directory, never DATA_DIR, so a copy of the data (a backup) does not carry the key that
 * opens its secrets (docs/decisions.md).
 */
export const embeddedSecretsKeyPath = (env: NodeJS.ProcessEnv): string => join(userConfigDir(env), 'generic-integration', 'secrets-key');

/**
 * The SECRETS_KEY of an embedded process: the configured one wins; without one, the key in the user's
 * configuration directory, generated there on the first start (a directory of mode 0700, a file of
 * 0600). The distributed services never call this: their key comes from the operator's secret manager.
 */
export function embeddedSecretsKey(config: { SECRETS_KEY?: string }, env: NodeJS.ProcessEnv): { value: string; path: string | null; created: boolean } {
  if (config.SECRETS_KEY) return { value: config.SECRETS_KEY, path: null, created: false };
  return loadOrCreateKeyFile(embeddedSecretsKeyPath(env), 0o700);
}
