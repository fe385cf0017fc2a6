// Streams one large file through GenericIntegrationFileTransfer into a freshly started embedded
// service and reports the throughput and how much the service's resident memory grew meanwhile.
//   npm run build && node tools/bench/upload.mjs [MiB, default 1024]
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

const MIB = 1024 * 1024;
const mebibytes = Number(process.argv[2] ?? 1024);
const ROOT = resolve(import.meta.dirname, '../..');
const ADMIN = 'bench-admin-token-0123456789abcdef';
const BOUNDARY = 'gi-bench-boundary-x7Qp';

const dataDir = mkdtempSync(join(tmpdir(), 'gi-bench-upload-'));
const child = spawn(process.execPath, [join(ROOT, 'dist/apps/cli/main.js'), 'up'], {
  env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'info', EMBEDDED_PROCESSES: '1',
    MAX_FILE_SIZE: '64gb', MAX_UPLOAD_SIZE: '64gb', SYNC_TIMEOUT_SECONDS: '3600' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const port = await new Promise((done, fail) => {
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      const entry = JSON.parse(line);
      if (entry.msg === 'listening') done(entry.port);
    } catch {
      // not a log line
    }
  });
  child.once('exit', (code) => fail(new Error(`service exited with ${code}`)));
});
const base = `http://127.0.0.1:${port}`;

const admin = async (method, path, body) => {
  const res = await fetch(`${base}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  return res.json();
};
const code = `const e = Context.GetRequestEntity(); e.ResponseBody = e.RequestFiles; Context.SetResponseEntity(e);`;
await admin('PUT', '/bots/bench/entities/Doc', {});
await admin('PUT', '/bots/bench/integrations/files', { entityName: 'Doc', code });
const { token } = await admin('POST', '/bots/bench/tokens', {});

const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) * 1024;
const before = rss();
let peak = before;
const sampler = setInterval(() => (peak = Math.max(peak, rss())), 20);

const block = randomBytes(MIB);
const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
const hash = createHash('sha256');
const started = performance.now();
const reply = await new Promise((done, fail) => {
  const req = request(`${base}/api/Platform/bench/Doc/files/GenericIntegrationFileTransfer`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': head.length + mebibytes * MIB + tail.length },
  });
  req.on('response', (res) => {
    let text = '';
    res.on('data', (c) => (text += c));
    res.on('end', () => done({ status: res.statusCode, body: JSON.parse(text) }));
  });
  req.on('error', fail);
  let sent = 0;
  req.write(head);
  const pump = () => {
    while (sent < mebibytes) {
      hash.update(block);
      sent++;
      if (!req.write(block)) return void req.once('drain', pump);
    }
    req.end(tail);
  };
  pump();
});
const seconds = (performance.now() - started) / 1000;
clearInterval(sampler);
peak = Math.max(peak, rss());

const file = reply.body?.[0];
const ok = reply.status === 200 && file?.Size === mebibytes * MIB && file?.Sha256 === hash.digest('hex');
console.log(JSON.stringify({
  uploadedMiB: mebibytes,
  status: reply.status,
  sizeAndSha256Match: ok,
  seconds: Number(seconds.toFixed(2)),
  mbPerSecond: Number((mebibytes * MIB / 1e6 / seconds).toFixed(1)),
  rssBeforeMiB: Number((before / MIB).toFixed(1)),
  rssPeakMiB: Number((peak / MIB).toFixed(1)),
  rssGrowthMiB: Number(((peak - before) / MIB).toFixed(1)),
}));
child.kill('SIGTERM');
await new Promise((done) => child.once('exit', done));
rmSync(dataDir, { recursive: true, force: true });
process.exit(ok ? 0 : 1);
