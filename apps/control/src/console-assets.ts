import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';

/** The kinds of file the console is made of; anything else in its directory is never served. */
export const CONSOLE_MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface ConsoleAsset {
  body: Buffer;
  type: string;
  etag: string;
}

/** The console's files by path under /console/ (`index.html`, `js/main.js`, ...), read once at start. */
export type ConsoleAssets = ReadonlyMap<string, ConsoleAsset>;

/**
 * The console's directory: beside the bundle (`dist/apps/cli/console`, copied there by tools/build.mjs)
 * or, running from the checkout, `apps/control/console`.
 */
export function consoleAssetsDir(here: string = __dirname): string {
  const bundled = join(here, 'console');
  return existsSync(join(bundled, 'index.html')) ? bundled : join(here, '..', 'console');
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : entry.isFile() ? [path] : [];
  });
}

/** Reads every servable file of the console into memory; fails at start when the console is missing. */
export function loadConsoleAssets(dir: string = consoleAssetsDir()): ConsoleAssets {
  if (!existsSync(join(dir, 'index.html'))) throw new Error(`The web console is missing: no index.html in ${dir} (run npm run build).`);
  const assets = new Map<string, ConsoleAsset>();
  for (const file of filesUnder(dir)) {
    const type = CONSOLE_MEDIA_TYPES[extname(file)];
    if (!type) continue;
    const body = readFileSync(file);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    assets.set(relative(dir, file).split(sep).join('/'), { body, type, etag });
  }
  return assets;
}
