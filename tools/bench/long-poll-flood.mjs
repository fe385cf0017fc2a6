// `node tools/bench/long-poll-flood.mjs` (after `npm run build`; Linux, `prlimit` from util-linux): the
// embedded service under an open-file limit of 1,024, one bot holding 1,100 long polls on one invocation
// (more than the limit), then another bot's 20 sync calls and a /healthz, each on a connection of its
// own. Prints how many the other bot got answered 200, and what the flooding bot's polls got
// (docs/security.md, Tenant isolation, 2).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const ADMIN = 'flood-admin-token-0123456789abcdef';
const POLLS = 1100;
const dir = mkdtempSync(join(tmpdir(), 'gi-flood-'));
const env = { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'info', EMBEDDED_PROCESSES: '1' };
const child = spawn('prlimit', ['--nofile=1024:1024', process.execPath, join(ROOT, 'dist/apps/cli/main.js'), 'up'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((found) => {
  let text = '';
  child.stdout.on('data', (chunk) => {
    text += chunk;
    const listening = /"port":(\d+)[^\n]*"msg":"listening"/.exec(text);
    if (listening) found(Number(listening[1]));
  });
});

/** One request on a connection of its own; its status, or the error code (a reset, a timeout). */
const call = (method, path, token, body, timeoutMs = 5000) =>
  new Promise((answered) => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' };
    const req = http.request(`http://127.0.0.1:${port}${path}`, { method, agent: false, headers, signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => answered({ status: res.statusCode, text }));
    });
    req.on('error', (error) => answered({ status: error.name === 'AbortError' ? 'timeout' : error.code }));
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });

const connectors = { flood: 'await new Promise((r) => setTimeout(r, 120000)); Context.SetResponseEntity(Context.GetRequestEntity());', quiet: 'const e = Context.GetRequestEntity(); e.ResponseBody = { ok: true }; Context.SetResponseEntity(e);' };
const tokens = {};
for (const [bot, code] of Object.entries(connectors)) {
  await call('PUT', `/admin/bots/${bot}/entities/Order`, ADMIN, {});
  await call('PUT', `/admin/bots/${bot}/integrations/x`, ADMIN, { entityName: 'Order', code, timeoutSeconds: 300 });
  tokens[bot] = JSON.parse((await call('POST', `/admin/bots/${bot}/tokens`, ADMIN, {})).text).token;
}
const { invocationId } = JSON.parse((await call('POST', '/api/Platform/flood/Order/x/GenericIntegration?asyncResponse=true', tokens.flood, {})).text);
const polls = Array.from({ length: POLLS }, () => call('GET', `/api/Platform/flood/GetGenericIntegrationResponse?invocationId=${invocationId}&waitSeconds=60`, tokens.flood, undefined, 90_000));
// Long enough for every poll to be held or refused.
await new Promise((done) => setTimeout(done, 8000));
const quiet = [];
for (let i = 0; i < 20; i++) quiet.push(await call('POST', '/api/Platform/quiet/Order/x/GenericIntegration', tokens.quiet, {}));
const healthz = await call('GET', '/healthz', '-');
child.kill('SIGKILL');
const flood = {};
for (const poll of await Promise.all(polls)) flood[poll.status] = (flood[poll.status] ?? 0) + 1;
console.log(JSON.stringify({ quietAnswered: `${quiet.filter((r) => r.status === 200).length}/20`, quiet: [...new Set(quiet.map((r) => r.status))], healthz: healthz.status, floodPolls: flood }));
rmSync(dir, { recursive: true, force: true });
