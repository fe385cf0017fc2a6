import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, ConsoleMessage, Page } from 'playwright-core';
import { ROOT } from './service-process';

/** The browser the tests drive: Debian's `chromium` package unless CHROMIUM_PATH names another. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Starts headless Chromium; as root (CI containers) without its sandbox, which refuses to run as root. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`No Chromium at ${CHROMIUM_PATH}: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH.`);
  }
  const args = ['--disable-dev-shm-usage'];
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  return chromium.launch({ executablePath: CHROMIUM_PATH, args });
}

/** A path under test-artifacts/ (gitignored), its directory created. */
export function artifactPath(...parts: string[]): string {
  const path = join(ROOT, 'test-artifacts', ...parts);
  mkdirSync(dirname(path), { recursive: true });
  return path;
}

/**
 * Everything the page reported that a user would never want: uncaught errors, and console errors
 * other than the browser's note that a request answered 4xx (which the page handles itself), such
 * as Content-Security-Policy and Trusted Types violations.
 */
export function pageProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() !== 'error') return;
    if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) return;
    problems.push(`console: ${message.text()}`);
  });
  return problems;
}

/**
 * Holds the page's requests that `match` until `release()`, so a test can make their answers come late.
 * `release` waits for at least one request to be held (a hold that caught nothing would prove nothing),
 * lets them through, and resolves once each one's answer, body and all, has reached the page. `caught`
 * resolves once the first request is held: what the page did before asking is done by then.
 */
export async function holdRequests(page: Page, match: (url: URL) => boolean): Promise<{ caught: Promise<void>; release(): Promise<void> }> {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let caught!: () => void;
  const caughtOne = new Promise<void>((resolve) => (caught = resolve));
  const answered: Promise<unknown>[] = [];
  await page.route(match, (route) => {
    caught();
    const answer = opened
      .then(() => route.continue())
      .then(() => route.request().response())
      .then((response) => response?.finished());
    answered.push(answer);
    return answer.then(() => undefined);
  });
  return {
    caught: caughtOne,
    async release() {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('holdRequests: no request matched, so none was held')), 10_000);
      });
      try {
        await Promise.race([caughtOne, timedOut]);
      } finally {
        clearTimeout(timer);
        open();
      }
      await Promise.all(answered);
      await page.unroute(match);
    },
  };
}
