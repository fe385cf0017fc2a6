// The measuring of `npm run bench` (run.mjs): the run's settings, autocannon load runs with the CPU each
// process used meanwhile (read from /proc by processes.mjs), the outcome counters read while a backlog
// drains, the rows these make, and the services a scenario starts and configures (scenarios.mjs).
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CORES } from './machine.mjs';
import { cpuMicros, cpuReading, machineBusyMicros, ownCpuMicros, rssMb, startNode } from './processes.mjs';

export const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/apps/cli/main.js');
const ADMIN_TOKEN = `bench-admin-${randomBytes(12).toString('hex')}`;
export const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
export const DEFAULT_SECONDS = 6;
export const DURATION = Number(process.env.BENCH_SECONDS ?? DEFAULT_SECONDS);
export const WARM_UP_SECONDS = 2;
export const BODY = JSON.stringify({ orderId: 42, customer: { id: 7, name: 'Ada' }, lines: [{ sku: 'A-1', qty: 2 }] });
export const EXECUTOR_CONCURRENCY = 16;
/** How often the outcome counters are read while a backlog drains; the drain's timing is this coarse. */
export const SAMPLE_MS = 100;
/** A distributed drain's window opens this long after every executor has completed a job. */
export const DRAIN_SETTLE_MS = 1000;
/** A drain window shorter than this (the backlog ran out) is too short to report. */
const MIN_WINDOW_MS = 2000;
/** A backlog whose completions stop growing for this long is reported as stalled. */
const STALL_MS = 30_000;
/** Work outside the benchmark above this many cores during a row is called out: that row's figures are low. */
export const OUTSIDE_LOAD_NOTICE = 0.25;

/** What the run measured: its rows in order, and the notes that go with them (report.mjs prints and writes both). */
export const rows = [];
export const notes = [];
/** What the run created, removed at its end (run.mjs). */
export const dataDirs = [];
export const topologies = [];

// ---------------------------------------------------------------------------------------------------
// Load and measurement

export function cannon(url, { connections, token, duration = DURATION, amount, body = BODY, headers = {} }) {
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
export const perRequest = (micros, requests) => (requests > 0 ? Math.round(micros / requests) : null);
export const totalRss = (services) => Math.round(services.reduce((sum, s) => sum + rssMb(s.pid), 0));

/**
 * The start of a measured window: CPU so far of the processes that do the work (`runners`), the other
 * service processes, the broker, the benchmark itself (the load generator) and the whole machine.
 */
export function openWindow({ runners, others = [], broker = null }) {
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
export function closeWindow(window) {
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

export const sum = (values) => values.reduce((a, b) => a + b, 0);

/** A warm-up, then the measured autocannon run with what each part of the machine used meanwhile. */
export async function loadRun(url, options, services, broker = null) {
  await cannon(url, { ...options, duration: WARM_UP_SECONDS });
  const window = openWindow({ runners: services, broker });
  const result = await cannon(url, options);
  return { result, usage: closeWindow(window) };
}

export function httpRow(id, name, against, { result, usage }, services) {
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
export function kindsText(row) {
  const kinds = Object.entries(row.cpuByKind ?? {});
  return kinds.length > 1 ? ` (${kinds.map(([kind, micros]) => `${kind} ${micros}`).join(' + ')})` : '';
}

export function record(row) {
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
export async function measureHttp(id, name, url, { connections, token, services, broker, body, headers, against = `c=${connections}` }) {
  const run = await loadRun(url, { connections, token, body, headers }, services, broker);
  return httpRow(id, name, against, run, services);
}

/** Recorded outcomes of a service, from its Prometheus counter: all of them, and the failed ones. */
export async function outcomes(service) {
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
export function watchBacklog(runner, baseline) {
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
export async function completionWindow(runners, { others, broker, seconds, queued }) {
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
export async function runnersIdle(runners) {
  let last = -1;
  for await (const sample of outcomeSamples(runners)) {
    if (sample.total === last) return;
    last = sample.total;
  }
}

export function drainRow(id, name, { completed, failed, usage }, services) {
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
export async function outcomesReach(service, target) {
  for await (const sample of outcomeSamples([service])) if (sample.total >= target) return;
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

// ---------------------------------------------------------------------------------------------------
// Services

/** Settings of the services a run may be given from its own environment. */
const PASSED_SETTINGS = ['ACCESS_LOG', 'HEAP_GROWTH_PERCENT'];

export function startService(command, args, env, options) {
  // These pass through, so a run can state what a setting costs (ACCESS_LOG=off npm run bench).
  const passed = Object.fromEntries(PASSED_SETTINGS.filter((name) => process.env[name]).map((name) => [name, process.env[name]]));
  // The SECRETS_KEY an embedded service generates goes to a configuration directory of the run's own.
  configHome ??= newDataDir();
  return startNode([CLI, command, ...args], { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN, XDG_CONFIG_HOME: configHome, ...passed, ...env }, options);
}
let configHome;

export function newDataDir() {
  const dir = mkdtempSync(join(tmpdir(), 'gi-bench-'));
  dataDirs.push(dir);
  return dir;
}

export async function admin(base, method, path, body) {
  const response = await fetch(`${base}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.status === 204 ? null : response.json();
}

export const webhook = (base, integration, async = false) =>
  `${base}/api/Platform/bench/Order/${integration}/GenericIntegration${async ? '?asyncResponse=true' : ''}`;
