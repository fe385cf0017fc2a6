import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * A secret kept in a file under the data directory: read when present, otherwise generated once and
 * written with mode 0600. Used for the admin token and the token-signing secret when not configured.
 */
export function loadOrCreateSecret(dataDir: string, fileName: string): { value: string; path: string; created: boolean } {
  const path = resolve(join(dataDir, fileName));
  try {
    const value = readFileSync(path, 'utf8').trim();
    if (value) return { value, path, created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  const value = randomBytes(32).toString('base64url');
  writeFileSync(path, `${value}\n`, { mode: 0o600, flag: 'wx' });
  return { value, path, created: true };
}
