import type { Context } from 'koa';
import { notFound } from '@gi/domain';
import { publicAccess, Routes } from '@gi/http';
import type { ConsoleAsset, ConsoleAssets } from './console-assets';

/**
 * The console runs only its own scripts and styles, talks only to this origin, cannot be framed, and
 * builds its pages without HTML string sinks (Trusted Types): an entity or log line that holds markup
 * stays text.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
  // Revalidated on every load (ETag), so a new version of the service shows its new console at once.
  'Cache-Control': 'no-cache',
};

/**
 * GET /console: the web console (static ES modules and one style sheet), public: it holds no data and no
 * secret; everything it shows comes from the control API, called with the admin token the operator
 * signs in with. Each file has one path, its name as stored (`/console/` redirects to `/console`).
 */
export function consoleRouter(assets: ConsoleAssets): Routes {
  const index = assets.get('index.html');
  if (!index) throw new Error('The web console has no index.html.');
  const PREFIX = '/console/';

  const send = (ctx: Context, asset: ConsoleAsset) => {
    ctx.set(CONSOLE_HEADERS);
    ctx.type = asset.type;
    ctx.etag = asset.etag;
    ctx.status = 200; // ctx.fresh compares validators only on a 2xx response
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.body = asset.body;
  };

  return new Routes()
    .get('/console', publicAccess, (ctx) => send(ctx, index))
    .get(PREFIX, publicAccess, (ctx) => {
      ctx.status = 308;
      ctx.redirect('/console');
    })
    .get(`${PREFIX}*asset`, publicAccess, (ctx) => {
      // Looked up by the path as sent: an escaped spelling of a name is not that name.
      const asset = assets.get(ctx.path.slice(PREFIX.length));
      if (!asset) throw notFound(`The console has no file ${ctx.path}.`);
      send(ctx, asset);
    });
}
