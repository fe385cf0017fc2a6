import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, get } from 'node:http';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpApp } from '@gi/http';
import { createLogger, createMetrics } from '@gi/observability';
import { consoleAssetsDir, loadConsoleAssets } from './console-assets';
import { CONSOLE_CSP, consoleRouter } from './console.router';

const assets = loadConsoleAssets(consoleAssetsDir());
const text = (path: string) => assets.get(path)!.body.toString('utf8');
const scripts = [...assets.keys()].filter((path) => path.endsWith('.js'));
/** A module's code without its comment lines (which may name what the code must not do). */
const codeOf = (path: string) =>
  text(path)
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\/\*\*?|\*)/.test(line))
    .join('\n');

describe('web console files', () => {
  it('has an index page that loads only its own files: no inline script or style', () => {
    const html = text('index.html');
    const tags = [...html.matchAll(/<(script|link)\b[^>]*>/g)].map((m) => m[0]);
    expect(tags.length).toBeGreaterThanOrEqual(3);
    for (const tag of tags) expect(tag).toMatch(/(src|href)="\/console\/[^"]+"/);
    expect(html).not.toMatch(/<script>|<style|\sstyle=|\son[a-z]+=/i);
    for (const [, path] of html.matchAll(/(?:src|href)="\/console\/([^"]+)"/g)) expect(assets.has(path)).toBe(true);
  });

  it('imports only modules that exist, by relative path', () => {
    for (const script of scripts) {
      const dir = script.split('/').slice(0, -1);
      for (const [, target] of text(script).matchAll(/^import .* from '([^']+)';$/gm)) {
        expect(target).toMatch(/^\.\.?\//);
        const resolved = [...dir];
        for (const part of target.split('/')) {
          if (part === '..') resolved.pop();
          else if (part !== '.') resolved.push(part);
        }
        expect([script, assets.has(resolved.join('/'))]).toEqual([script, true]);
      }
    }
  });

  it('never builds markup from strings (Trusted Types would refuse it) nor evaluates code', () => {
    for (const script of scripts) {
      expect([script, codeOf(script)]).not.toEqual([script, expect.stringMatching(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|\.style\.|setAttribute\('style'/)]);
    }
  });

  it('keeps the admin token in sessionStorage only, and sends it only in the Authorization header', () => {
    const all = scripts.map(codeOf).join('\n');
    expect(all).not.toMatch(/localStorage|document\.cookie/);
    expect(all.match(/sessionStorage\.setItem/g)).toHaveLength(1);
    expect(text('js/api.js')).toContain('authorization: `Bearer ${token}`');
    expect(all).not.toMatch(/[?&](token|adminToken)=/);
  });

  it('refuses to start without its files, naming the directory', () => {
    const empty = mkdtempSync(join(tmpdir(), 'gi-console-'));
    try {
      expect(() => loadConsoleAssets(empty)).toThrow(`no index.html in ${empty}`);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('is found beside the bundle first, else in the checkout', () => {
    const bundle = mkdtempSync(join(tmpdir(), 'gi-bundle-'));
    try {
      expect(consoleAssetsDir(bundle)).toBe(join(bundle, '..', 'console'));
      mkdirSync(join(bundle, 'console'));
      writeFileSync(join(bundle, 'console', 'index.html'), '<!doctype html>');
      expect(consoleAssetsDir(bundle)).toBe(join(bundle, 'console'));
    } finally {
      rmSync(bundle, { recursive: true, force: true });
    }
  });
});

describe('GET /console', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    const app = createHttpApp({ logger: createLogger('silent', 'test'), metrics: createMetrics(), routes: [consoleRouter(assets)] });
    server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('serves the page with a strict Content-Security-Policy and no-sniff, no-frame headers', async () => {
    for (const path of ['/console']) {
      const reply = await fetch(base + path);
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(reply.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
      expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
      expect(reply.headers.get('x-frame-options')).toBe('DENY');
      expect(reply.headers.get('referrer-policy')).toBe('no-referrer');
      expect(await reply.text()).toBe(text('index.html'));
    }
    expect(CONSOLE_CSP).toContain("default-src 'self'");
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    expect(CONSOLE_CSP).toContain("require-trusted-types-for 'script'");
    expect(CONSOLE_CSP).not.toContain('unsafe');
  });

  it('has one spelling of each path: /console/ redirects to /console, other spellings are not found', async () => {
    const slash = await fetch(`${base}/console/`, { redirect: 'manual' });
    expect([slash.status, slash.headers.get('location')]).toEqual([308, '/console']);
    for (const path of ['/Console', '/console/JS/main.js', '/console/js%2Fmain.js', '/console/js/main.js/']) {
      expect([path, (await fetch(base + path)).status]).toEqual([path, 404]);
    }
  });

  it('serves modules and the style sheet with their types and the same headers', async () => {
    const js = await fetch(`${base}/console/js/main.js`);
    expect([js.status, js.headers.get('content-type'), js.headers.get('content-security-policy')]).toEqual([200, 'text/javascript; charset=utf-8', CONSOLE_CSP]);
    expect(await js.text()).toBe(text('js/main.js'));
    const css = await fetch(`${base}/console/console.css`);
    expect([css.status, css.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8']);
  });

  it('answers a revalidation with 304 while the file is unchanged', async () => {
    const first = await fetch(`${base}/console/js/api.js`);
    const etag = first.headers.get('etag');
    expect(first.headers.get('cache-control')).toBe('no-cache');
    expect(etag).toMatch(/^"[\w-]+"$/);
    // node:http, not fetch: fetch adds Cache-Control: no-cache to conditional requests, which forbids a 304.
    const status = (headers: Record<string, string>) =>
      new Promise<number | undefined>((resolve, reject) => {
        get(`${base}/console/js/api.js`, { headers }, (reply) => {
          reply.resume();
          resolve(reply.statusCode);
        }).on('error', reject);
      });
    expect(await status({ 'if-none-match': etag! })).toBe(304);
    expect(await status({ 'if-none-match': '"another"' })).toBe(200);
  });

  it('serves nothing but the console files: other paths are problem-details 404s', async () => {
    for (const path of ['/console/tsconfig.json', '/console/nope.js', '/console/..%2Fsrc%2Fconsole.router.ts', '/console/js/../../package.json']) {
      const reply = await fetch(base + path);
      expect([path, reply.status, reply.headers.get('content-type')]).toEqual([path, 404, 'application/problem+json']);
    }
  });
});
