// `npm run bench`: starts the services itself, warms up, runs each scenario with autocannon, prints one
// table and writes docs/benchmarks.md. Needs `npm run build` first (npm run bench does it) and, for the
// distributed scenarios, RabbitMQ at AMQP_URL (skipped with a note when it does not answer).
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/apps/cli/main.js');
const ADMIN_TOKEN = `bench-admin-${randomBytes(12).toString('hex')}`;
const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const BODY = JSON.stringify({ orderId: 42, customer: { id: 7, name: 'Ada' }, lines: [{ sku: 'A-1', qty: 2 }] });
const ACK = readFileSync(join(ROOT, 'examples/connectors/ack.js'), 'utf8');
const SLEEPY = `const end = Date.now() + 20; while (Date.now() < end) {}\n${ACK}`;

const rows = [];
const notes = [];

/** Starts `gi <command>` on a free port; resolves when it logs `listening`. */
const startService = (command, args, env) => startProcess([CLI, command, ...args], env);

/** Starts a Node script that logs `listening` with its port (a service, or the ceiling). */
function startProcess(argv, env) {
  const command = argv.slice(0, 2).join(' ');
  const child = spawn(process.execPath, argv, {
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} did not start`)), 20_000);
    const onLine = (line) => {
      try {
        const entry = JSON.parse(line);
        if (entry.msg === 'listening') {
          clearTimeout(timer);
          resolvePort({ child, url: `http://127.0.0.1:${entry.port}`, pid: child.pid });
        }
      } catch {
        // not a log line
      }
    };
    // Every line is read, so a busy service never blocks on a full pipe.
    createInterface({ input: child.stdout }).on('line', onLine);
    createInterface({ input: child.stderr }).on('line', onLine);
    child.once('exit', (code) => reject(new Error(`${command} exited with ${code}`)));
  });
}

const stop = (service) => new Promise((done) => (service.child.exitCode !== null ? done() : (service.child.once('exit', done), service.child.kill('SIGTERM'))));
/** CPU time (user + system) a process has used so far, in microseconds, all its threads included. */
const cpuMicros = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
};
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const rssMb = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  } catch {
    return NaN;
  }
};

async function admin(base, method, path, body) {
  const response = await fetch(`${base}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.status === 204 ? null : response.json();
}

async function setUp(base) {
  await admin(base, 'PUT', '/bots/bench/entities/Order', {});
  await admin(base, 'PUT', '/bots/bench/integrations/ack', { entityName: 'Order', code: ACK });
  await admin(base, 'PUT', '/bots/bench/integrations/sleepy', { entityName: 'Order', code: SLEEPY });
  return (await admin(base, 'POST', '/bots/bench/tokens', { label: 'bench' })).token;
}

function cannon(url, { connections, token, duration = DURATION, method = 'POST' }) {
  return autocannon({
    url,
    method,
    connections,
    duration,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: method === 'POST' ? BODY : undefined,
  });
}

/** Runs a warm-up then the measured autocannon run; records a row. */
async function scenario(name, url, options, pids = []) {
  await cannon(url, { ...options, duration: 2 });
  const cpuBefore = pids.map(cpuMicros);
  const result = await cannon(url, options);
  const cpuUsed = pids.map(cpuMicros).reduce((sum, after, i) => sum + after - cpuBefore[i], 0);
  const errors = result.errors + result.timeouts + result.non2xx;
  const row = {
    name,
    rps: Math.round(result.requests.average),
    cpu: pids.length ? Math.round(cpuUsed / result.requests.total) : null,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors,
    rss: pids.length ? Math.round(pids.map(rssMb).reduce((a, b) => a + b, 0)) : null,
  };
  rows.push(row);
  console.log(`${name}: ${row.rps} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, errors ${errors}, ${row.cpu} µs CPU per request`);
  return row;
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

/** Async: accepts per second for a while, then how long until every accepted job completed. */
async function asyncScenario(name, base, token, { pollBase = base, pids = [] } = {}) {
  const url = `${base}/api/Platform/bench/Order/ack/GenericIntegration?asyncResponse=true`;
  const accept = await scenario(`${name}: async accept (202/s)`, url, { connections: 50, token }, pids);
  const started = Date.now();
  const accepted = accept.rps * DURATION;
  // Completion throughput: wait until nothing is Queued or Running.
  for (;;) {
    const [queued, running] = await Promise.all(
      ['Queued', 'Running'].map((status) => admin(pollBase, 'GET', `/bots/bench/invocations?status=${status}&limit=1`)),
    );
    if (queued.invocations.length + running.invocations.length === 0) break;
    if (Date.now() - started > 300_000) throw new Error('async backlog did not drain in 5 minutes');
    await new Promise((r) => setTimeout(r, 200));
  }
  const drainSeconds = (Date.now() - started) / 1000;
  const completionRate = Math.round(accepted / (DURATION + drainSeconds));
  rows.push({ name: `${name}: async completions/s`, rps: completionRate, p50: null, p99: null, errors: 0, rss: null, cpu: null });
  console.log(`${name}: about ${completionRate} completions/s (backlog drained ${drainSeconds.toFixed(1)} s after the load)`);
  return completionRate;
}

/** Poll wake latency: from a job's recorded finish to the waiting poll's answer. */
async function pollWake(base, token, samples = 100) {
  const latencies = [];
  for (let i = 0; i < samples; i++) {
    const started = await fetch(`${base}/api/Platform/bench/Order/sleepy/GenericIntegration?asyncResponse=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: BODY,
    }).then((r) => r.json());
    const polled = await fetch(`${base}/api/Platform/bench/GetGenericIntegrationResponse?invocationId=${started.invocationId}&waitSeconds=30`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const answeredAt = Date.now();
    await polled.text();
    const detail = await admin(base, 'GET', `/bots/bench/invocations/${started.invocationId}`);
    latencies.push(answeredAt - Date.parse(detail.finishedAt));
  }
  const row = { name: 'poll wake latency (finish -> poll answer)', rps: null, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors: 0, rss: null, cpu: null };
  rows.push(row);
  console.log(`poll wake latency: p50 ${row.p50} ms, p99 ${row.p99} ms`);
}

async function brokerAnswers() {
  try {
    const { connect } = await import('amqplib');
    const connection = await connect(AMQP_URL);
    await connection.close();
    return true;
  } catch {
    return false;
  }
}

async function main() {
  const dataDirs = [];
  const newDataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'gi-bench-'));
    dataDirs.push(dir);
    return dir;
  };
  try {
    // 1. Ceiling: a bare Koa route doing the same transform, in its own process.
    const ceiling = await startProcess([join(ROOT, 'tools/bench/ceiling.mjs')], {});
    const ceilingRow = await scenario('ceiling: bare Koa, same transform, c=50', ceiling.url, { connections: 50 }, [ceiling.pid]);
    await stop(ceiling);

    // 2-4. Embedded.
    const embedded = await startService('up', [], { DATA_DIR: newDataDir() });
    const token = await setUp(embedded.url);
    const syncUrl = `${embedded.url}/api/Platform/bench/Order/ack/GenericIntegration`;
    await scenario('embedded sync, ack connector, c=1', syncUrl, { connections: 1, token }, [embedded.pid]);
    const embeddedSync = await scenario('embedded sync, ack connector, c=50', syncUrl, { connections: 50, token }, [embedded.pid]);
    await asyncScenario('embedded', embedded.url, token, { pids: [embedded.pid] });
    await pollWake(embedded.url, token);
    await stop(embedded);
    notes.push(`Embedded sync at c=50 reached ${((embeddedSync.rps / ceilingRow.rps) * 100).toFixed(0)}% of the ceiling's req/s.`);

    // 5. Distributed over RabbitMQ with 1 and 2 executors.
    if (!(await brokerAnswers())) {
      notes.push(`Distributed scenarios skipped: no RabbitMQ at ${AMQP_URL.replace(/\/\/[^@]*@/, '//')}.`);
    } else {
      for (const executorCount of [1, 2]) {
        const prefix = `gi-bench-${randomBytes(4).toString('hex')}`;
        const env = { DATA_DIR: newDataDir(), AMQP_URL, BUS_PREFIX: prefix, TOKEN_SECRET: randomBytes(32).toString('hex'), EXECUTOR_CONCURRENCY: '16' };
        const control = await startService('control', [], env);
        const gateway = await startService('gateway', [], env);
        const executors = await Promise.all(Array.from({ length: executorCount }, () => startService('executor', ['--pools', 'default'], env)));
        const distToken = await setUp(control.url);
        const label = `distributed, ${executorCount} executor${executorCount > 1 ? 's' : ''}`;
        const pids = [gateway.pid, ...executors.map((e) => e.pid)];
        await scenario(`${label}: sync c=50`, `${gateway.url}/api/Platform/bench/Order/ack/GenericIntegration`, { connections: 50, token: distToken }, pids);
        // The accept rate is the gateway's: its CPU per request is counted alone.
        await asyncScenario(label, gateway.url, distToken, { pollBase: control.url, pids: [gateway.pid] });
        await Promise.all([gateway, control, ...executors].map(stop));
        execFileSync(process.execPath, ['-e', DELETE_TOPOLOGY, AMQP_URL, prefix], { cwd: ROOT });
      }
      const [one, two] = ['1 executor', '2 executors'].map((n) => rows.find((r) => r.name === `distributed, ${n}: async completions/s`).rps);
      notes.push(`Two executors completed ${(two / one).toFixed(2)}x the jobs per second of one (same 2 cores, broker included).`);
    }

    // 6. Sandbox overhead per run (the runtime's own micro-benchmark).
    execFileSync('npx', ['esbuild', 'libs/sandbox/bench/overhead.ts', '--bundle', '--platform=node', '--packages=external', '--outfile=dist/bench/overhead.js', '--log-level=warning'], { cwd: ROOT });
    const overhead = execFileSync(process.execPath, ['dist/bench/overhead.js', '3000'], { cwd: ROOT, encoding: 'utf8' });
    notes.push(`Sandbox overhead (libs/sandbox/bench/overhead.ts, 3,000 runs):\n\n\`\`\`\n${overhead.trim()}\n\`\`\``);
  } finally {
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
  report();
}

const DELETE_TOPOLOGY = `
const { connect } = require('amqplib');
const [url, prefix] = process.argv.slice(1);
(async () => {
  const c = await connect(url);
  const ch = await c.createChannel();
  for (const q of [prefix + '.jobs.default', prefix + '.dead-letters']) await ch.deleteQueue(q).catch(() => {});
  for (const e of [prefix + '.jobs', prefix + '.dead-letter', prefix + '.completions', prefix + '.cancellations']) await ch.deleteExchange(e).catch(() => {});
  await c.close();
})();
`;

function report() {
  const cell = (v, unit = '') => (v === null || v === undefined || Number.isNaN(v) ? '' : `${v}${unit}`);
  const table = [
    '| Scenario | req/s | p50 | p99 | errors | CPU per request | RSS |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.name} | ${cell(r.rps)} | ${cell(r.p50, ' ms')} | ${cell(r.p99, ' ms')} | ${r.errors} | ${cell(r.cpu, ' µs')} | ${cell(r.rss, ' MB')} |`),
  ].join('\n');
  const machine = `${cpus().length} cores (${cpus()[0].model.trim()}), ${Math.round(totalmem() / 1024 ** 3)} GiB, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`;
  console.log(`\n${table}\n\n${notes.join('\n\n')}`);
  writeFileSync(
    join(ROOT, 'docs/benchmarks.md'),
    `# Benchmarks

Written by \`npm run bench\` (tools/bench/run.mjs); do not edit by hand. Each scenario: autocannon for
${DURATION} s after a 2 s warm-up, load generator on the same machine as the services. CPU per request:
the CPU time (user + system, every thread) the server processes used during the run, divided by the
requests answered; on 2 cores shared with the load generator it bounds req/s better than the clock. Request body:
\`${BODY}\`; connector: \`examples/connectors/ack.js\`.

Machine: ${machine}.

${table}

${notes.join('\n\n')}

Reproduce: \`npm run bench\` (needs RabbitMQ at AMQP_URL for the distributed rows; BENCH_SECONDS sets the
duration of each run).
`,
  );
}

await main();
