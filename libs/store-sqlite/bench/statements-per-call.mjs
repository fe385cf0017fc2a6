/**
 * The SQLite statements the main thread of the embedded service (`gi up`) executes per sync webhook
 * call, counted (not timed: the count does not depend on how loaded the machine is). Starts the built
 * service of this checkout with count-statements.cjs preloaded, defines a bot with the ack connector,
 * warms up, then makes sequential sync calls and prints the statements per call, by SQL text.
 *
 *   node tools/build.mjs && node libs/store-sqlite/bench/statements-per-call.mjs [calls]
 *
 * Statements of the periodic background work (sweeps, heartbeats, checkpoints) that fall in the window
 * show as small fractions. Worker threads (sandbox, WAL checkpointer) are not counted.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../../..');
const CLI = join(ROOT, 'dist/apps/cli/main.js');
const ADMIN_TOKEN = 'statements-per-call-admin-token-0123456789';
const CALLS = Number(process.argv[2] ?? 2000);
const WARM_UP = 200;

const dataDir = mkdtempSync(join(tmpdir(), 'gi-statements-'));
const countsFile = join(dataDir, 'counts.json');
const child = spawn(process.execPath, ['-r', join(HERE, 'count-statements.cjs'), CLI, 'up'], {
  // One process: the statements are counted in the process that serves the calls.
  env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', DATA_DIR: join(dataDir, 'data'), ADMIN_TOKEN, ACCESS_LOG: 'off', EMBEDDED_PROCESSES: '1', COUNT_STATEMENTS_FILE: countsFile },
  stdio: ['ignore', 'pipe', 'pipe'],
});
process.on('exit', () => child.kill('SIGKILL'));

const base = await new Promise((resolveBase, reject) => {
  const timer = setTimeout(() => reject(new Error('the service did not start in 30 s')), 30_000);
  const onLine = (line) => {
    try {
      const entry = JSON.parse(line);
      if (entry.msg === 'listening') {
        clearTimeout(timer);
        resolveBase(`http://127.0.0.1:${entry.port}`);
      }
    } catch {
      // not a log line
    }
  };
  createInterface({ input: child.stdout }).on('line', onLine);
  createInterface({ input: child.stderr }).on('line', onLine);
  child.once('exit', (code) => reject(new Error(`the service exited with ${code}`)));
});

async function admin(method, path, body) {
  const response = await fetch(`${base}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.status === 204 ? null : response.json();
}

async function counts() {
  rmSync(countsFile, { force: true });
  child.kill('SIGUSR2');
  while (!existsSync(countsFile)) await new Promise((r) => setTimeout(r, 10));
  return JSON.parse(readFileSync(countsFile, 'utf8'));
}

await admin('PUT', '/bots/bench/entities/Order', {});
await admin('PUT', '/bots/bench/integrations/ack', { entityName: 'Order', code: readFileSync(join(ROOT, 'examples/connectors/ack.js'), 'utf8') });
const { token } = await admin('POST', '/bots/bench/tokens', { label: 'bench' });
const url = `${base}/api/Platform/bench/Order/ack/GenericIntegration`;
const call = async () => {
  const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"orderId":42}' });
  await response.text();
  if (response.status !== 200) throw new Error(`webhook call: ${response.status}`);
};

for (let i = 0; i < WARM_UP; i++) await call();
const before = await counts();
for (let i = 0; i < CALLS; i++) await call();
const after = await counts();

const perCall = Object.entries(after)
  .map(([sql, n]) => [sql.replace(/\s+/g, ' ').trim().slice(0, 110), (n - (before[sql] ?? 0)) / CALLS])
  .filter(([, n]) => n > 0)
  .sort((a, b) => b[1] - a[1]);
for (const [sql, n] of perCall) console.log(`${n.toFixed(3).padStart(7)}  ${sql}`);
console.log(`${perCall.reduce((sum, [, n]) => sum + n, 0).toFixed(3)} statements per sync call (main thread, ${CALLS} sequential calls)`);

child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
rmSync(dataDir, { recursive: true, force: true });
