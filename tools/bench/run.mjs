// `npm run bench`: starts the services itself, warms up, runs each scenario with autocannon, prints one
// table with the targets of the benchmark issue and writes docs/benchmarks.md. Needs `npm run build`
// first (npm run bench does it) and, for the distributed scenarios, RabbitMQ at AMQP_URL (skipped with
// a note when it does not answer). BENCH_SECONDS sets the length of each measured run.
import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { brokerPid, brokerVersion, deleteTopology, watchQueue } from './broker.mjs';
import { brokerCosts, IN_FLIGHT } from './broker-costs.mjs';
import { CORES, describeMachine } from './machine.mjs';
import { canPin, childPids, cpuMicros, cpuReading, machineBusyMicros, ownCpuMicros, rssMb, startNode, stop, stopAll } from './processes.mjs';
import { KEPT_HEADING, markdown, table, targets } from './report.mjs';
import { sequentialLatency } from './sequential.mjs';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/apps/cli/main.js');
const ADMIN_TOKEN = `bench-admin-${randomBytes(12).toString('hex')}`;
const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const DEFAULT_SECONDS = 6;
const DURATION = Number(process.env.BENCH_SECONDS ?? DEFAULT_SECONDS);
/** BENCH_ONLY=embedded,distributed runs only those scenarios (ceiling, embedded, durability, durable, processes, writer, distributed, broker, sandbox); docs/benchmarks.md is then left as it is. */
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((name) => name.trim())) : null;
const selected = (name) => !ONLY || ONLY.has(name);
const WARM_UP_SECONDS = 2;
const BODY = JSON.stringify({ orderId: 42, customer: { id: 7, name: 'Ada' }, lines: [{ sku: 'A-1', qty: 2 }] });
const ACK = readFileSync(join(ROOT, 'examples/connectors/ack.js'), 'utf8');
const SLEEPY = `const end = Date.now() + 20; while (Date.now() < end) {}\n${ACK}`;
/** Forwards the order with fetch to a downstream API (tools/bench/mock-api.mjs) and replies with its answer. */
const forwarding = (apiUrl) => `const entity = Context.GetRequestEntity();
const answer = await fetch('${apiUrl}/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(entity.RequestBody) });
entity.ResponseBody = await answer.json();
Context.SetResponseEntity(entity);`;
/** Replies without ever reading RequestBody: what a body's size costs a connector that does not look at it. */
const IGNORE_BODY = `const entity = Context.GetRequestEntity();
entity.ResponseBody = { Status: 'Accepted' };
Context.SetResponseEntity(entity);`;
/** Durable steps per call of the step-cost row: the ack connector after this many journalled steps. */
const STEPS_PER_CALL = 20;
const STEPS = `for (let i = 0; i < ${STEPS_PER_CALL}; i++) await Context.Step('step', () => i);\n${ACK}`;
/** Finished steps the replay row answers from the journal. */
const REPLAYED_STEPS = 10_000;
/** Journals REPLAYED_STEPS steps, suspends in a sleep, then (resumed) replays them all and answers. */
const REPLAY = `let total = 0;
for (let i = 0; i < ${REPLAYED_STEPS}; i++) total += await Context.Step('step', () => i);
await Context.Sleep('pause', 1500);
${ACK}`;
/** An order of 800 lines, about 100 KB of JSON: what an ERP sends. */
const LARGE_BODY = JSON.stringify({
  orderId: 42,
  customer: { id: 7, name: 'Ada' },
  lines: Array.from({ length: 800 }, (_, i) => ({ sku: `A-${i}`, qty: i % 7, price: i * 1.25, description: `item number ${i} of the order, with some words`, tags: ['x', 'y'] })),
});
/** The ack connector at the end of a 200 KB bundle (comments here: what its size costs, not what its code does). */
const BUNDLED = `${'// one line of a large bundle, such as a TypeScript project with its packages\n'.repeat(2600)}${ACK}`;
const EXECUTOR_CONCURRENCY = 16;
const POLL_SAMPLES = 100;
/** Calls of the one-caller latency row, timed to the microsecond. */
const SEQUENTIAL_CALLS = 3000;
/** How often the outcome counters are read while a backlog drains; the drain's timing is this coarse. */
const SAMPLE_MS = 100;
/** A distributed drain's window opens this long after every executor has completed a job. */
const DRAIN_SETTLE_MS = 1000;
/** A drain window shorter than this (the backlog ran out) is too short to report. */
const MIN_WINDOW_MS = 2000;
/** A backlog whose completions stop growing for this long is reported as stalled. */
const STALL_MS = 30_000;
/** Operations of each broker-alone row. */
const BROKER_OPERATIONS = 20_000;
/** Work outside the benchmark above this many cores during a row is called out: that row's figures are low. */
const OUTSIDE_LOAD_NOTICE = 0.25;

const rows = [];
const notes = [];
const failures = [];
const dataDirs = [];
const topologies = [];

// ---------------------------------------------------------------------------------------------------
// Load and measurement

function cannon(url, { connections, token, duration = DURATION, amount, body = BODY, headers = {} }) {
  return autocannon({
    url,
    method: 'POST',
    connections,
    duration,
    amount,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body,
  });
}

/** Per request, in whole microseconds. */
const perRequest = (micros, requests) => (requests > 0 ? Math.round(micros / requests) : null);
const totalRss = (services) => Math.round(services.reduce((sum, s) => sum + rssMb(s.pid), 0));

/**
 * The start of a measured window: CPU so far of the processes that do the work (`runners`), the other
 * service processes, the broker, the benchmark itself (the load generator) and the whole machine.
 */
function openWindow({ runners, others = [], broker = null }) {
  const pids = { runners: runners.map((s) => s.pid), others: others.map((s) => s.pid) };
  return {
    pids,
    kinds: [...runners, ...others].map(processKind),
    broker,
    at: performance.now(),
    runners: cpuReading(pids.runners),
    others: cpuReading(pids.others),
    brokerCpu: cpuMicros(broker),
    own: ownCpuMicros(),
    machine: machineBusyMicros(),
  };
}

/**
 * CPU microseconds each part used since the window opened. `outside` is in cores: what the machine
 * was busy with beyond this run's processes (other users' work, time the hypervisor took).
 */
function closeWindow(window) {
  const seconds = (performance.now() - window.at) / 1000;
  const runners = window.pids.runners.map((pid, i) => cpuMicros(pid) - window.runners[i]);
  const othersEach = window.pids.others.map((pid, i) => cpuMicros(pid) - window.others[i]);
  const others = sum(othersEach);
  // CPU by process kind (gateway, executor, control, up), every process of a kind together.
  const byKind = {};
  [...runners, ...othersEach].forEach((micros, i) => (byKind[window.kinds[i]] = (byKind[window.kinds[i]] ?? 0) + micros));
  const broker = cpuMicros(window.broker) - window.brokerCpu;
  const own = ownCpuMicros() - window.own;
  const ours = runners.reduce((a, b) => a + b, 0) + others + (Number.isFinite(broker) ? broker : 0) + own;
  const outside = Math.max(0, machineBusyMicros() - window.machine - ours) / 1e6 / seconds;
  return { seconds, runners, others, byKind, broker, own, outside };
}

/** The command a service process runs (`gi gateway` -> gateway); an embedded cluster's processes are all `up`. */
const processKind = (service) => service.kind ?? service.name.split(' ').pop();

/** CPU per request of each process kind, in whole microseconds. */
const perRequestByKind = (byKind, requests) => Object.fromEntries(Object.entries(byKind).map(([kind, micros]) => [kind, perRequest(micros, requests)]));

const sum = (values) => values.reduce((a, b) => a + b, 0);

/** A warm-up, then the measured autocannon run with what each part of the machine used meanwhile. */
async function loadRun(url, options, services, broker = null) {
  await cannon(url, { ...options, duration: WARM_UP_SECONDS });
  const window = openWindow({ runners: services, broker });
  const result = await cannon(url, options);
  return { result, usage: closeWindow(window) };
}

function httpRow(id, name, against, { result, usage }, services) {
  const requests = result.requests.total;
  return record({
    id,
    name,
    against,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    cpu: perRequest(sum(usage.runners) + usage.others, requests),
    cpuByKind: perRequestByKind(usage.byKind, requests),
    brokerCpu: perRequest(usage.broker, requests),
    loadCpu: perRequest(usage.own, requests),
    outside: usage.outside,
    rss: totalRss(services),
  });
}

/** ` (gateway 80 + executor 300 + control 2)` for rows that span process kinds; empty otherwise. */
function kindsText(row) {
  const kinds = Object.entries(row.cpuByKind ?? {});
  return kinds.length > 1 ? ` (${kinds.map(([kind, micros]) => `${kind} ${micros}`).join(' + ')})` : '';
}

function record(row) {
  rows.push(row);
  const figures = [
    row.rps !== null && `${row.rps} req/s`,
    row.p50 !== null && `p50 ${row.p50} ms`,
    row.p99 !== null && `p99 ${row.p99} ms`,
    `errors ${row.errors}`,
    row.cpu !== null && `${row.cpu} µs CPU per request${kindsText(row)}`,
    Number.isFinite(row.brokerCpu) && `broker ${row.brokerCpu} µs`,
    Number.isFinite(row.outside) && `outside load ${row.outside.toFixed(2)} cores`,
  ].filter(Boolean);
  console.log(`${row.name}: ${figures.join(', ')}`);
  return row;
}

/** `against`: the ceiling row the row is compared with (`ceiling-<against>`); the one at the same concurrency by default. */
async function measureHttp(id, name, url, { connections, token, services, broker, body, headers, against = `c=${connections}` }) {
  const run = await loadRun(url, { connections, token, body, headers }, services, broker);
  return httpRow(id, name, against, run, services);
}

/** One caller's sync calls in sequence, timed to the microsecond (autocannon keeps whole milliseconds). */
async function measureSequential(service, token) {
  const window = openWindow({ runners: [service] });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  const run = await sequentialLatency(webhook(service.url, 'ack'), { headers, body: BODY, calls: SEQUENTIAL_CALLS });
  const usage = closeWindow(window);
  const ms = (value) => Number(value.toFixed(2));
  return record({
    id: 'embedded-sync-sequential',
    name: `embedded sync, ack connector, one caller timed to the µs (${SEQUENTIAL_CALLS} calls in sequence)`,
    against: 'c=1',
    rps: Math.round(run.calls / run.seconds),
    mean: ms((run.seconds * 1000) / run.calls),
    p50: ms(run.p50),
    p99: ms(run.p99),
    errors: 0,
    cpu: perRequest(sum(usage.runners), run.calls),
    brokerCpu: NaN,
    loadCpu: perRequest(usage.own, run.calls),
    outside: usage.outside,
    rss: totalRss([service]),
  });
}

/** Recorded outcomes of a service, from its Prometheus counter: all of them, and the failed ones. */
async function outcomes(service) {
  const response = await fetch(`${service.url}/metrics`).catch((error) => {
    throw new Error(`${service.name} (pid ${service.pid}) did not answer /metrics: ${error.cause?.message ?? error.message}`);
  });
  const text = await response.text();
  let total = 0;
  let failed = 0;
  for (const [, labels, value] of text.matchAll(/^gi_invocation_outcomes_total\{([^}]*)\} (\S+)$/gm)) {
    total += Number(value);
    if (!labels.includes('status="Completed"')) failed += Number(value);
  }
  return { total, failed };
}

/**
 * The outcome counts of the processes that run jobs, read every SAMPLE_MS; fails when they stop
 * growing for STALL_MS.
 */
async function* outcomeSamples(runners) {
  let progress = { total: -1, at: performance.now() };
  for (;;) {
    await sleep(SAMPLE_MS);
    const counts = await Promise.all(runners.map(outcomes));
    const sample = { counts, total: sum(counts.map((c) => c.total)), failed: sum(counts.map((c) => c.failed)), at: performance.now() };
    if (sample.total > progress.total) progress = sample;
    else if (sample.at - progress.at > STALL_MS) throw new Error(`completions stalled at ${sample.total}`);
    yield sample;
  }
}

/**
 * Times a backlog from its first completion to its last: from the first sample above `baseline` to the
 * one `expected` above it, CPU over the same window. `expect(n)` may come after the start (embedded:
 * once the accept run tells how many jobs there are).
 */
function watchBacklog(runner, baseline) {
  let expected = Infinity;
  const done = (async () => {
    let start = null;
    for await (const sample of outcomeSamples([runner])) {
      if (!start && sample.total > baseline) start = { sample, window: openWindow({ runners: [runner] }) };
      if (start && sample.total - baseline >= expected) {
        const usage = closeWindow(start.window);
        const completed = sample.total - start.sample.total;
        if (!(completed > 0)) throw new Error(`the backlog (${expected} jobs) drained too fast to time; raise BENCH_SECONDS`);
        return { completed, failed: sample.failed - start.sample.failed, usage };
      }
    }
  })();
  done.catch(() => {}); // awaited by the caller; this keeps an early failure from being unhandled meanwhile
  return { expect: (n) => (expected = n), done };
}

/**
 * Completions per second while a backlog drains: a window of up to `seconds` that opens DRAIN_SETTLE_MS
 * after every runner has completed a job (so no runner's start-up or first runs are counted), and closes
 * early when fewer jobs than the runners could take at once are left queued (so none waits for work).
 */
async function completionWindow(runners, { others, broker, seconds, queued }) {
  const low = 2 * EXECUTOR_CONCURRENCY * runners.length;
  let baselines = null;
  let allBusySince = null;
  let start = null;
  for await (const sample of outcomeSamples(runners)) {
    baselines ??= sample.counts.map((c) => c.total);
    if (allBusySince === null && sample.counts.every((c, i) => c.total > baselines[i])) allBusySince = sample.at;
    if (!start && allBusySince !== null && sample.at - allBusySince >= DRAIN_SETTLE_MS) start = { sample, window: openWindow({ runners, others, broker }) };
    if (!start) continue;
    const elapsed = sample.at - start.sample.at;
    const runningDry = (await queued()) < low;
    if (elapsed >= seconds * 1000 || runningDry) {
      const usage = closeWindow(start.window);
      if (runningDry && elapsed < MIN_WINDOW_MS) throw new Error(`the backlog ran out ${(elapsed / 1000).toFixed(1)} s into the window; it is too small to time`);
      return { completed: sample.total - start.sample.total, failed: sample.failed - start.sample.failed, usage };
    }
  }
}

/** Waits until the runners' counts stop moving: what they had fetched before a purge is done. */
async function runnersIdle(runners) {
  let last = -1;
  for await (const sample of outcomeSamples(runners)) {
    if (sample.total === last) return;
    last = sample.total;
  }
}

function drainRow(id, name, { completed, failed, usage }, services) {
  const cores = (micros) => micros / 1e6 / usage.seconds;
  return record({
    id,
    name,
    against: 'c=50',
    rps: Math.round(completed / usage.seconds),
    p50: null,
    p99: null,
    errors: failed,
    cpu: perRequest(sum(usage.runners) + usage.others, completed),
    cpuByKind: perRequestByKind(usage.byKind, completed),
    brokerCpu: perRequest(usage.broker, completed),
    outside: usage.outside,
    rss: totalRss(services),
    cores: {
      runners: cores(sum(usage.runners)),
      perRunner: usage.runners.map(cores),
      others: cores(usage.others),
      broker: cores(usage.broker),
      bench: cores(usage.own),
      outside: usage.outside,
      total: CORES,
    },
    seconds: usage.seconds,
    completed,
  });
}

/** Waits until a service has recorded `target` outcomes in all. */
async function outcomesReach(service, target) {
  for await (const sample of outcomeSamples([service])) if (sample.total >= target) return;
}

// ---------------------------------------------------------------------------------------------------
// Services

/** Settings of the services a run may be given from its own environment. */
const PASSED_SETTINGS = ['ACCESS_LOG', 'HEAP_GROWTH_PERCENT'];

function startService(command, args, env, options) {
  // These pass through, so a run can state what a setting costs (ACCESS_LOG=off npm run bench).
  const passed = Object.fromEntries(PASSED_SETTINGS.filter((name) => process.env[name]).map((name) => [name, process.env[name]]));
  // The SECRETS_KEY an embedded service generates goes to a configuration directory of the run's own.
  configHome ??= newDataDir();
  return startNode([CLI, command, ...args], { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN, XDG_CONFIG_HOME: configHome, ...passed, ...env }, options);
}
let configHome;

function newDataDir() {
  const dir = mkdtempSync(join(tmpdir(), 'gi-bench-'));
  dataDirs.push(dir);
  return dir;
}

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
  await admin(base, 'PUT', '/bots/bench/integrations/bundled', { entityName: 'Order', code: BUNDLED });
  return (await admin(base, 'POST', '/bots/bench/tokens', { label: 'bench' })).token;
}

/**
 * The ack connector behind the github inbound scheme (docs/inbound.md): its key is a connector secret,
 * its calls carry X-Hub-Signature-256 of the body instead of a token. Returns the headers of a call; no
 * X-GitHub-Delivery, so every call runs (a delivery id adds an Idempotency-Key record, as any key does).
 */
async function githubIntegration(base) {
  const secret = randomBytes(20).toString('hex');
  await admin(base, 'PUT', '/bots/bench/integrations/github', { entityName: 'Order', code: ACK, inboundAuth: { scheme: 'github', secret: 'GITHUB_WEBHOOK_SECRET' } });
  await admin(base, 'PUT', '/bots/bench/integrations/github/secrets/GITHUB_WEBHOOK_SECRET', { value: secret });
  return { 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(BODY).digest('hex')}`, 'x-github-event': 'push' };
}

const webhook = (base, integration, async = false) =>
  `${base}/api/Platform/bench/Order/${integration}/GenericIntegration${async ? '?asyncResponse=true' : ''}`;

// ---------------------------------------------------------------------------------------------------
// Scenarios

async function ceilingScenario() {
  const api = await startNode([join(ROOT, 'tools/bench/mock-api.mjs')], { PATH: process.env.PATH });
  const ceiling = await startNode([join(ROOT, 'tools/bench/ceiling.mjs')], { PATH: process.env.PATH, DOWNSTREAM_URL: api.url });
  for (const connections of [1, 50]) {
    const run = await loadRun(ceiling.url, { connections }, [ceiling]);
    httpRow(`ceiling-c=${connections}`, `ceiling: bare Koa, same transform, c=${connections}`, null, run, [ceiling]).isCeiling = true;
  }
  const large = await loadRun(ceiling.url, { connections: 50, body: LARGE_BODY }, [ceiling]);
  httpRow('ceiling-large-body', `ceiling: bare Koa, the same ${Math.round(LARGE_BODY.length / 1000)} KB JSON body parsed, one field read, c=50`, null, large, [ceiling]).isCeiling = true;
  const forward = await loadRun(`${ceiling.url}/forward`, { connections: 50 }, [ceiling]);
  httpRow('ceiling-fetch', 'ceiling: bare Koa, the order forwarded with fetch to the same downstream API, c=50', null, forward, [ceiling]).isCeiling = true;
  await Promise.all([stop(ceiling), stop(api)]);
}

async function embeddedScenario() {
  const api = await startNode([join(ROOT, 'tools/bench/mock-api.mjs')], { PATH: process.env.PATH });
  // The downstream API listens on loopback, which connectors may call only when trusted.
  const service = await startService('up', [], { DATA_DIR: newDataDir(), EMBEDDED_PROCESSES: '1', CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1' });
  const token = await setUp(service.url);
  await admin(service.url, 'PUT', '/bots/bench/integrations/forward', { entityName: 'Order', code: forwarding(api.url), allowedHosts: ['127.0.0.1'] });
  await admin(service.url, 'PUT', '/bots/bench/integrations/ignore-body', { entityName: 'Order', code: IGNORE_BODY });
  const services = [service];
  for (const connections of [1, 50]) {
    await measureHttp(`embedded-sync-c${connections}`, `embedded sync, ack connector, c=${connections}`, webhook(service.url, 'ack'), { connections, token, services });
  }
  await measureHttp('embedded-sync-github-c50', 'embedded sync, ack connector, GitHub signature instead of a token (inboundAuth github), c=50', webhook(service.url, 'github'), {
    connections: 50,
    services,
    headers: await githubIntegration(service.url),
  });
  await measureHttp('embedded-sync-bundle-c50', `embedded sync, ack connector in a ${Math.round(BUNDLED.length / 1000)} KB bundle, c=50`, webhook(service.url, 'bundled'), { connections: 50, token, services });
  const kb = Math.round(LARGE_BODY.length / 1000);
  await measureHttp('embedded-sync-large-body-c50', `embedded sync, ack connector (reads one field), ${kb} KB JSON body, c=50`, webhook(service.url, 'ack'), { connections: 50, token, services, body: LARGE_BODY, against: 'large-body' });
  await measureHttp('embedded-sync-large-body-unread-c50', `embedded sync, connector that never reads RequestBody, ${kb} KB JSON body, c=50`, webhook(service.url, 'ignore-body'), { connections: 50, token, services, body: LARGE_BODY, against: 'large-body' });
  await measureHttp('embedded-sync-fetch-c50', 'embedded sync, connector forwarding with fetch to a downstream API on loopback, c=50', webhook(service.url, 'forward'), { connections: 50, token, services, against: 'fetch' });
  await measureSequential(service, token);
  await embeddedAsync(service, token);
  await pollWake(service, token);
  await Promise.all([stop(service), stop(api)]);
}

/**
 * Durable steps on SQLite: the service CPU one journalled step costs (calls of STEPS_PER_CALL steps
 * against the same calls without steps, in the same process, both at c=50), and the time the run that
 * resumes an invocation of REPLAYED_STEPS finished steps takes (from its claim to its outcome: the replay
 * answered from the journal, the sleep found over, the reply).
 */
async function durableScenario() {
  const service = await startService('up', [], { DATA_DIR: newDataDir(), EMBEDDED_PROCESSES: '1', SUSPEND_AFTER_SECONDS: '1' });
  const token = await setUp(service.url);
  await admin(service.url, 'PUT', '/bots/bench/integrations/steps', { entityName: 'Order', code: STEPS });
  await admin(service.url, 'PUT', '/bots/bench/integrations/replay', { entityName: 'Order', code: REPLAY, timeoutSeconds: 600 });
  const services = [service];
  const plain = await measureHttp('durable-baseline-c50', 'durable: the same process without steps (ack connector), c=50', webhook(service.url, 'ack'), { connections: 50, token, services });
  const steps = await measureHttp('durable-steps-c50', `durable: ack connector after ${STEPS_PER_CALL} journalled steps per call, c=50`, webhook(service.url, 'steps'), { connections: 50, token, services });
  record({
    id: 'durable-step-cpu',
    name: `durable: service CPU per journalled step (SQLite; the two rows above, per step)`,
    against: null,
    rps: steps.rps === null ? null : steps.rps * STEPS_PER_CALL,
    p50: null,
    p99: null,
    errors: steps.errors,
    cpu: steps.cpu === null || plain.cpu === null ? null : Math.round((steps.cpu - plain.cpu) / STEPS_PER_CALL),
    brokerCpu: NaN,
    outside: Math.max(plain.outside, steps.outside),
    rss: totalRss(services),
  });

  const accepted = await fetch(webhook(service.url, 'replay', true), { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: BODY });
  const { invocationId } = await accepted.json();
  const poll = `${service.url}/api/Platform/bench/GetGenericIntegrationResponse?invocationId=${invocationId}&waitSeconds=60`;
  for (let status = 202; status === 202; ) status = (await fetch(poll, { headers: { authorization: `Bearer ${token}` } })).status;
  const run = await admin(service.url, 'GET', `/bots/bench/invocations/${invocationId}`);
  if (run.status !== 'Completed' || run.attempt !== 2) throw new Error(`the replay run ended ${run.status} at attempt ${run.attempt}, not Completed at 2`);
  record({
    id: 'durable-replay',
    name: `durable: a resumed run answering ${REPLAYED_STEPS.toLocaleString('en')} finished steps from its journal (claim to outcome)`,
    against: null,
    rps: null,
    p50: run.durationMs,
    p99: null,
    errors: 0,
    cpu: null,
    brokerCpu: NaN,
    outside: NaN,
    rss: totalRss(services),
  });
  await stop(service);
}

/** Embedded sync calls again with SQLITE_SYNCHRONOUS=full: every commit waits for the WAL's fsync (docs/operations.md). */
async function durabilityScenario() {
  const service = await startService('up', [], { DATA_DIR: newDataDir(), EMBEDDED_PROCESSES: '1', SQLITE_SYNCHRONOUS: 'full' });
  const token = await setUp(service.url);
  for (const connections of [1, 50]) {
    const name = `embedded sync, SQLITE_SYNCHRONOUS=full, c=${connections}`;
    await measureHttp(`embedded-sync-full-c${connections}`, name, webhook(service.url, 'ack'), { connections, token, services: [service] });
  }
}

/**
 * Accepts (202s per second) while the same process runs the jobs, then the completion rate from the
 * first completion to the drain of that backlog. The warm-up's jobs finish before either is measured.
 */
async function embeddedAsync(service, token) {
  const url = webhook(service.url, 'ack', true);
  const before = (await outcomes(service)).total;
  const warm = await cannon(url, { connections: 50, token, duration: WARM_UP_SECONDS });
  await outcomesReach(service, before + warm['2xx']);

  const watch = watchBacklog(service, (await outcomes(service)).total);
  const window = openWindow({ runners: [service] });
  const result = await cannon(url, { connections: 50, token });
  httpRow('embedded-accept', 'embedded async accept (202/s), c=50, jobs run meanwhile', 'c=50', { result, usage: closeWindow(window) }, [service]);
  watch.expect(result['2xx']);
  const drain = await watch.done;
  drainRow('embedded-drain', 'embedded async completions/s (first completion -> backlog drained)', drain, [service]);
}

/**
 * The multi-process embedded curve: `gi up --processes N` for N = 1 and 2, sync calls at c=50. CPU per
 * call counts every process (the primary and each embedded process, all their threads).
 */
async function processesScenario() {
  for (const processes of [1, 2]) {
    const primary = await startService('up', ['--processes', String(processes)], { DATA_DIR: newDataDir() });
    const services = [primary, ...childPids(primary.pid).map((pid) => ({ pid, name: `embedded process ${pid}`, kind: 'up' }))];
    if (services.length !== (processes === 1 ? 1 : processes + 1)) throw new Error(`gi up --processes ${processes} runs ${services.length} processes`);
    const token = await setUp(primary.url);
    await measureHttp(`embedded-processes-${processes}`, `embedded sync, --processes ${processes}, c=50`, webhook(primary.url, 'ack'), { connections: 50, token, services });
    await stop(primary);
  }
}

/**
 * The SQLite writer's ceiling without HTTP (tools/bench/sqlite-writer-ceiling.ts): invocations created,
 * claimed and completed per second through the real store on one file, from 1 and from 2 processes.
 */
async function writerScenario() {
  execFileSync(join(ROOT, 'node_modules/.bin/esbuild'), ['tools/bench/sqlite-writer-ceiling.ts', '--bundle', '--platform=node', '--packages=external', '--outfile=dist/bench/sqlite-writer-ceiling.js', '--log-level=warning'], { cwd: ROOT });
  const output = execFileSync(process.execPath, ['dist/bench/sqlite-writer-ceiling.js', '1,2', String(DURATION)], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  for (const line of output.trim().split('\n')) {
    const { processes, writesPerSecond, cpuMicrosPerWrite } = JSON.parse(line);
    record({
      id: `sqlite-writer-${processes}`,
      name: `SQLite writer ceiling, no HTTP: invocations created + claimed + completed per second, ${processes} process${processes > 1 ? 'es' : ''}`,
      rps: writesPerSecond,
      p50: null,
      p99: null,
      errors: 0,
      cpu: cpuMicrosPerWrite,
      brokerCpu: null,
      outside: null,
      rss: null,
    });
  }
}

/** From a job's recorded finish to the answer of a poll that was already waiting for it. */
async function pollWake(service, token) {
  const latencies = [];
  let notWaiting = 0;
  let errors = 0;
  const window = openWindow({ runners: [service] });
  for (let i = 0; i < POLL_SAMPLES; i++) {
    const accepted = await fetch(webhook(service.url, 'sleepy', true), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: BODY,
    }).then((r) => r.json());
    const polledAt = Date.now();
    const poll = await fetch(`${service.url}/api/Platform/bench/GetGenericIntegrationResponse?invocationId=${accepted.invocationId}&waitSeconds=30`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const answeredAt = Date.now();
    await poll.text();
    if (poll.status !== 200) {
      errors++;
      continue;
    }
    const finishedAt = Date.parse((await admin(service.url, 'GET', `/bots/bench/invocations/${accepted.invocationId}`)).finishedAt);
    if (finishedAt <= polledAt) notWaiting++;
    else latencies.push(answeredAt - finishedAt);
  }
  const usage = closeWindow(window);
  if (latencies.length === 0) throw new Error('no poll was waiting when its job finished');
  record({
    id: 'poll-wake',
    name: `poll wake latency, embedded (job finished -> waiting poll answered; ${latencies.length} polls)`,
    rps: null,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
    cpu: null,
    brokerCpu: null,
    outside: usage.outside,
    rss: totalRss([service]),
  });
  if (notWaiting > 0) notes.push(`Poll wake latency: ${notWaiting} of ${POLL_SAMPLES} jobs finished before their poll arrived and were left out.`);
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Where the executors run: the first alone on core 1, the second beside it on core 0, when taskset can pin them. */
function executorCores() {
  const pinned = CORES >= 2 && canPin('0') && canPin('1');
  return pinned ? { pinned, first: '1', second: '0' } : { pinned };
}

/**
 * Distributed: control and gateway; the accept rate with no executor running (gateway, broker and store
 * have the cores), which leaves a backlog; completions per second while it drains, with 1 executor and
 * then with a second one beside it; the rest of the backlog purged; sync calls with 1 and with 2.
 */
async function distributedScenario(broker, pinning) {
  const prefix = `gi-bench-${randomBytes(4).toString('hex')}`;
  topologies.push(prefix);
  const queue = `${prefix}.jobs.default`;
  const env = {
    DATA_DIR: newDataDir(),
    AMQP_URL,
    BUS_PREFIX: prefix,
    TOKEN_SECRET: randomBytes(32).toString('hex'),
    EXECUTOR_CONCURRENCY: String(EXECUTOR_CONCURRENCY),
    SANDBOX_WORKERS: '1',
    // A backlog waits in the queue on purpose; the sweeper must not republish it meanwhile.
    REPUBLISH_AFTER_SECONDS: '3600',
  };
  const control = await startService('control', [], env);
  const gateway = await startService('gateway', [], env);
  const token = await setUp(control.url);
  const front = [gateway, control];
  const asyncUrl = webhook(gateway.url, 'ack', true);
  const startExecutor = (cpus) => startService('executor', ['--pools', 'default'], env, { cpus });
  const label = (count) => {
    const cores = [pinning.first, pinning.second].slice(0, count).sort();
    return `${count} executor${count > 1 ? 's' : ''}${pinning.pinned ? ` (core${count > 1 ? 's' : ''} ${cores.join(', ')})` : ''}`;
  };

  const accept = await loadRun(asyncUrl, { connections: 50, token }, front, broker);
  httpRow('distributed-accept', 'distributed async accept (202/s), c=50, no executor running', 'c=50', accept, front);

  const queued = await watchQueue(AMQP_URL, queue);
  try {
    const drain = async (executors, id) => {
      const name = `distributed async completions/s, ${label(executors.length)}, while draining the backlog`;
      const result = await completionWindow(executors, { others: front, broker, seconds: DURATION, queued: queued.depth });
      return drainRow(id, name, result, [...front, ...executors]);
    };
    const first = await startExecutor(pinning.first);
    const one = await drain([first], 'distributed-drain-1');
    // Two executors need a backlog that lasts their window too: topped up with none running, as before.
    await stop(first);
    await fillQueue(asyncUrl, token, queued, Math.ceil(2.5 * one.rps * (DURATION + 3)));
    const executors = await Promise.all([pinning.first, pinning.second].map(startExecutor));
    await drain(executors, 'distributed-drain-2');
    await queued.purge();
    await runnersIdle(executors);

    const syncUrl = webhook(gateway.url, 'ack');
    await stop(executors[1]);
    await measureHttp('distributed-sync-1', `distributed sync, ${label(1)}, c=50`, syncUrl, { connections: 50, token, services: [...front, executors[0]], broker });
    const again = await startExecutor(pinning.second);
    await measureHttp('distributed-sync-2', `distributed sync, ${label(2)}, c=50`, syncUrl, { connections: 50, token, services: [...front, executors[0], again], broker });
  } finally {
    await queued.close();
    if (rows.some((r) => r.id.startsWith('distributed-drain-'))) notes.push(drainNote());
  }
}

/**
 * The broker alone (tools/bench/broker-costs.mjs): its CPU per operation for each kind of message a call
 * sends, so the distributed rows' broker CPU reads as a sum of parts.
 */
async function brokerScenario(brokerProcess) {
  for (const { id, name, opsPerSecond, brokerMicros } of await brokerCosts(AMQP_URL, brokerProcess, BROKER_OPERATIONS)) {
    record({ id: `broker-${id}`, name: `broker alone: ${name}`, rps: opsPerSecond, p50: null, p99: null, errors: 0, cpu: null, brokerCpu: brokerMicros, outside: null, rss: null });
  }
}

/** Accepts jobs until at least `target` wait in the queue. */
async function fillQueue(url, token, queued, target) {
  for (let pass = 0; pass < 3; pass++) {
    const missing = target - (await queued.depth());
    if (missing <= 0) return;
    await cannon(url, { connections: 50, token, amount: missing });
  }
  throw new Error(`the queue did not fill to ${target} jobs`);
}

/** What the cores did during each distributed drain, to tell whether the broker was the limit. */
function drainNote() {
  const lines = [1, 2]
    .map((count) => rows.find((r) => r.id === `distributed-drain-${count}`))
    .filter(Boolean)
    .map(({ name, completed, seconds, cores }) => {
      const each = cores.perRunner.length > 1 ? ` (${cores.perRunner.map((c) => c.toFixed(2)).join(' + ')})` : '';
      return (
        `${name.replace(/^distributed async completions\/s, /, '').replace(/, while draining the backlog$/, '')}: ${completed} jobs in ${seconds.toFixed(1)} s; ` +
        `executors ${cores.runners.toFixed(2)} cores${each}, RabbitMQ ${cores.broker.toFixed(2)}, gateway and control ${cores.others.toFixed(2)}, ` +
        `the benchmark itself ${cores.bench.toFixed(2)}, work outside it ${cores.outside.toFixed(2)} (of ${cores.total}).`
      );
    });
  return `Distributed drains, in cores (CPU seconds per second of the drain):\n\n${lines.map((l) => `- ${l}`).join('\n')}`;
}

async function sandboxOverhead() {
  execFileSync(join(ROOT, 'node_modules/.bin/esbuild'), ['libs/sandbox/bench/overhead.ts', '--bundle', '--platform=node', '--packages=external', '--outfile=dist/bench/overhead.js', '--log-level=warning'], { cwd: ROOT });
  const overhead = execFileSync(process.execPath, ['dist/bench/overhead.js', '3000'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  notes.push(`Sandbox overhead per run (the runtime's own micro-benchmark, libs/sandbox/bench/overhead.ts, 3,000 runs):\n\n\`\`\`\n${overhead.trim()}\n\`\`\``);
  console.log(overhead.trim());
}

/** Runs one group of scenarios; a failure is reported and the next group still runs. */
async function attempt(label, scenario) {
  if (interrupted) return;
  try {
    await scenario();
  } catch (error) {
    const cause = error.cause?.message ? ` (${error.cause.message})` : '';
    const why = `${label} failed: ${firstLines(error.message)}${cause}`;
    failures.push(why);
    console.error(why);
  } finally {
    await stopAll();
  }
}

function outsideLoadNote(disturbed) {
  const worst = Math.max(...disturbed.map((r) => r.outside));
  return (
    `Work outside the benchmark kept more than ${OUTSIDE_LOAD_NOTICE} cores busy during ${disturbed.length} of the ${rows.length} rows ` +
    `(up to ${worst.toFixed(2)} of ${CORES}; see the outside load column). Those rows' figures are lower than this machine ` +
    'does when otherwise idle; run again when it is.'
  );
}

/** A failure as a note: its first line, and the rest of its message as a block. */
function failureNote(failure) {
  const [first, ...rest] = failure.split('\n');
  return rest.length ? `Failed: ${first}\n\n\`\`\`\n${rest.join('\n')}\n\`\`\`` : `Failed: ${first}`;
}

/** A failed child's message carries its whole output; the first lines say why. */
const firstLines = (text, count = 6) => text.split('\n').filter((line) => line.trim()).slice(0, count).join('\n');

// ---------------------------------------------------------------------------------------------------
// Run

let cleaning = null;
/** Stops every process, deletes the broker objects and the temporary directories; once, however often asked. */
function cleanUp() {
  cleaning ??= (async () => {
    await stopAll();
    for (const prefix of topologies) {
      await deleteTopology(AMQP_URL, prefix).catch((error) => console.error(`could not delete the broker objects of ${prefix}: ${error.message}`));
    }
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  })();
  return cleaning;
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    interrupted = true;
    console.error(`${signal}: stopping the services and removing what the run created; docs/benchmarks.md is left as it was`);
    cleanUp().finally(() => process.exit(130));
  });
}

const isLocalHost = (host) => ['localhost', '127.0.0.1', '[::1]', hostname()].includes(host);

async function main() {
  if (!(DURATION > 0)) throw new Error(`BENCH_SECONDS must be a positive number of seconds, not ${process.env.BENCH_SECONDS}`);
  const broker = await brokerVersion(AMQP_URL);
  // Its CPU is read from /proc only when the URL names this host: a local broker process may be another one.
  const brokerProcess = broker && isLocalHost(new URL(AMQP_URL).hostname) ? brokerPid() : null;
  const pinning = executorCores();
  const pinningText = pinning.pinned
    ? 'Distributed executors are pinned with taskset (1 executor on core 1; 2 on cores 0 and 1), one sandbox thread each; everything else floats.'
    : 'taskset is missing or cannot pin to cores 0 and 1 here, so the distributed executors were not pinned (each still has one sandbox thread).';
  if (!pinning.pinned) console.log(`Note: ${pinningText}`);
  const machine = describeMachine({ broker, brokerLocal: brokerProcess !== null, pinning: pinningText });
  for (const [label, value] of machine) console.log(`${label}: ${value}`);

  try {
    if (selected('ceiling')) await attempt('ceiling', ceilingScenario);
    if (selected('embedded')) await attempt('embedded', embeddedScenario);
    if (selected('durability')) await attempt('durability', durabilityScenario);
    if (selected('durable')) await attempt('durable steps', durableScenario);
    if (selected('processes')) await attempt('embedded processes', processesScenario);
    if (selected('writer')) await attempt('SQLite writer ceiling', writerScenario);
    if (selected('distributed') && !broker) notes.push(`Distributed scenarios skipped: no RabbitMQ at ${AMQP_URL.replace(/\/\/[^@]*@/, '//')}.`);
    if (selected('distributed') && broker) {
      if (brokerProcess === null) notes.push('RabbitMQ runs elsewhere or its process is not visible here: its CPU is not counted.');
      await attempt('distributed', () => distributedScenario(brokerProcess, pinning));
    }
    if (selected('broker') && broker && brokerProcess !== null) await attempt('broker alone', () => brokerScenario(brokerProcess));
    else if (selected('broker')) notes.push('Broker-alone rows skipped: they need RabbitMQ running on this host, where its CPU can be read.');
    if (selected('sandbox')) await attempt('sandbox overhead', sandboxOverhead);
  } finally {
    await cleanUp();
  }
  if (interrupted) return;
  const disturbed = rows.filter((r) => r.outside > OUTSIDE_LOAD_NOTICE);
  if (disturbed.length) notes.unshift(outsideLoadNote(disturbed));
  notes.unshift(...failures.map(failureNote));
  const split = rows.filter((r) => kindsText(r) !== '');
  if (split.length) notes.push(`CPU per request by process kind (µs; every process of a kind together):\n\n${split.map((r) => `- ${r.name}: ${kindsText(r).slice(2, -1)}`).join('\n')}`);

  console.log(`\n${table(rows)}\n\n${targets(rows, OUTSIDE_LOAD_NOTICE)}\n\n${notes.join('\n\n')}`);
  if (ONLY) return console.log(`\nOnly ${[...ONLY].join(', ')} ran (BENCH_ONLY): docs/benchmarks.md is left as it was.`);
  const doc = join(ROOT, 'docs/benchmarks.md');
  const previous = existsSync(doc) ? readFileSync(doc, 'utf8') : '';
  const kept = previous.includes(`\n${KEPT_HEADING}`) ? previous.slice(previous.indexOf(`\n${KEPT_HEADING}`) + 1) : '';
  writeFileSync(doc, markdown({ method: method(), machine, rows, notes, reproduce: REPRODUCE, outsideNotice: OUTSIDE_LOAD_NOTICE, kept }));
  console.log('\nWrote docs/benchmarks.md');
  if (failures.length) process.exitCode = 1;
}

function method() {
  return `Every HTTP row: autocannon (one keep-alive connection per concurrent caller, in the benchmark's own
process) for ${DURATION} s after a ${WARM_UP_SECONDS} s warm-up, POSTing \`${BODY}\` to the
\`examples/connectors/ack.js\` connector. Columns:

- **req/s**: the mean over the run; for completion rows, jobs completed per second.
- **vs ceiling**: req/s as a share of the ceiling's doing the same work, and CPU per request as a multiple
  of the ceiling's: c=1 rows against the c=1 ceiling, the large-body and fetch rows against the ceiling of
  that work, every other row against c=50.
- **p50, p99**: autocannon's latencies. **errors**: connection errors and timeouts plus non-2xx answers; for
  completion rows, jobs that ended Failed.
- **CPU per request**: CPU time (user + system, every thread, from /proc) of the service processes during
  the row's window, divided by the requests answered or jobs completed in it. On cores shared with the load
  generator it bounds req/s better than the clock. Rows with several process kinds are split by kind in the
  notes (gateway, executor, control). **broker CPU per request**: the same for RabbitMQ's
  Erlang VM (beam.smp).
- **RSS**: the service processes' resident memory at the end of the row.
- **outside load**: cores the machine was busy with beyond this run's processes (the services, the broker,
  the load generator) during the row, from /proc/stat: other users' work and time the hypervisor took.
  Above ${OUTSIDE_LOAD_NOTICE} the row's figures are low and a note says so.

Rows:

- **ceiling**: a bare Koa route in its own process doing the ack connector's transform
  (tools/bench/ceiling.mjs): no store, no sandbox, no auth. The same route with the large body, and a
  route forwarding the order with Node's \`fetch\` to the same downstream API as the forwarding connector
  (tools/bench/mock-api.mjs, whose CPU is not counted), are the ceilings of those rows.
- **large JSON body**: an order of 800 lines (${Math.round(LARGE_BODY.length / 1000)} KB), to the ack connector (which reads
  \`RequestBody.orderId\`) and to one that never reads \`RequestBody\`.
- **embedded sync**: \`gi up\` with one process (SQLite store in a temporary directory, in-process bus, the
  QuickJS sandbox with its default worker threads), sync calls.
- **GitHub signature instead of a token**: the same sync calls to the ack connector of an integration
  whose inbound auth is \`github\` (docs/inbound.md): each call carries \`X-Hub-Signature-256\` of the
  body and no token; the gateway opens the key secret and checks the HMAC over the body's bytes. Compared
  with the bearer row above it, what verifying a signature costs per call.
- **one caller timed to the µs**: the same sync calls, one at a time over one keep-alive connection from a
  plain Node client (tools/bench/sequential.mjs) after 500 not counted: p50 and p99 to the hundredth of a
  millisecond, which autocannon's whole milliseconds cannot give.
- **embedded sync, --processes N**: \`gi up --processes N\` (N processes sharing the port and the store,
  EXECUTOR_CONCURRENCY and the sandbox threads split between them), sync calls at c=50; CPU per request
  counts the primary and every process. On a machine of 2 cores shared with the load generator, 2 processes
  cannot double the rate: compare the CPU per request.
- **durable**: \`gi up\` with one process; the ack connector after ${STEPS_PER_CALL} journalled \`Context.Step\`s
  per call against the ack connector alone, in the same process, both sync at c=50; **CPU per journalled
  step** is the difference per step. **A resumed run answering ${REPLAYED_STEPS.toLocaleString('en')} finished steps**: one
  async invocation journals that many steps, suspends in a 1.5 s sleep, and is resumed: p50 is the resumed
  attempt's time from its claim to its outcome.
- **SQLite writer ceiling**: tools/bench/sqlite-writer-ceiling.ts, no HTTP: each process runs 50 loops of
  create, claim and complete through the real store (group-committed) on one SQLite file for ${DURATION} s
  after a 1 s warm-up; req/s is invocations per second, CPU per request the CPU of the writing processes per invocation.
- **embedded async accept**: 202s per second at c=50; the same process runs the jobs meanwhile, so its CPU
  per request includes running them. **embedded async completions/s**: the jobs accepted in that run,
  completed per second from the first completion to the last, counted by the service's
  \`gi_invocation_outcomes_total\` (read every ${SAMPLE_MS} ms). The warm-up's jobs finish before either is
  measured.
- **poll wake latency**: a job that runs about 20 ms, polled with \`waitSeconds=30\` right after its 202: the
  time from the finish the executor recorded to the poll's answer, ${POLL_SAMPLES} in sequence (polls that
  arrived after the finish are left out).
- **distributed**: \`gi control\`, \`gi gateway\` and \`gi executor\` processes over RabbitMQ (one quorum queue,
  publisher confirms) sharing one SQLite file; executors with EXECUTOR_CONCURRENCY=${EXECUTOR_CONCURRENCY} and
  SANDBOX_WORKERS=1, pinned one per core (the first on core 1, the second on core 0). **async accept**: no
  executor runs, so the gateway, the broker and the store have the cores; the jobs (warm-up included) wait
  in the queue. **completions/s**: that backlog drained by one executor, then, topped up with no executor
  running, by two started together; each over a window of up to ${DURATION} s that opens
  ${DRAIN_SETTLE_MS / 1000} s after every executor has completed a job (start-up and first runs are not
  counted) and closes early if the queue runs low (no executor waits for work). CPU per request counts the
  executors, gateway and control. What is left of the backlog is then purged. The scaling target calls
  the broker the limit when the cores were at least 90% busy during the two executors' window and RabbitMQ
  used more CPU than the executors lacked for 1.7x. **sync c=50**: with 1 executor, then with 2.
- **broker alone**: tools/bench/broker-costs.mjs, no service running: each kind of message a call sends,
  ${BROKER_OPERATIONS.toLocaleString('en')} times with ${IN_FLIGHT} in flight from one connection, after a warm-up; req/s is operations per second,
  broker the RabbitMQ CPU per operation. Its messages come in larger batches than a service's, so the parts
  add up to less than a distributed row's broker CPU per call (docs/scaling.md).
- **sandbox overhead**: the runtime's own micro-benchmark (libs/sandbox/bench/overhead.ts), in the notes.`;
}

const REPRODUCE = `\`\`\`sh
npm ci
npm run bench                      # builds, runs every scenario, rewrites this file (2 to 3 minutes)
BENCH_SECONDS=2 npm run bench      # shorter measured runs (default ${DEFAULT_SECONDS} s each)
BENCH_ONLY=embedded npm run bench  # only some scenarios (ceiling, embedded, durability, durable, processes, writer, distributed, broker, sandbox); the doc is not rewritten
ACCESS_LOG=off BENCH_ONLY=embedded npm run bench  # the same without the access line, for its cost
HEAP_GROWTH_PERCENT=0 BENCH_ONLY=embedded npm run bench  # with V8's own heap growth (docs/operations.md, Memory)
AMQP_URL=amqp://user:pass@host:5672 npm run bench   # another broker (default amqp://guest:guest@127.0.0.1:5672)
\`\`\`

The distributed rows need RabbitMQ (skipped with a note otherwise); the executors are pinned with
\`taskset\` (util-linux) where it exists.`;

await main();
