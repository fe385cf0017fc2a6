// The scenarios of `npm run bench` (run.mjs), each a group of rows: the connectors and bodies they
// send, the services each starts (through measure.mjs) and what it measures against them.
import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { watchQueue } from './broker.mjs';
import { brokerCosts } from './broker-costs.mjs';
import { CORES } from './machine.mjs';
import {
  admin,
  AMQP_URL,
  BODY,
  cannon,
  closeWindow,
  completionWindow,
  drainRow,
  DURATION,
  EXECUTOR_CONCURRENCY,
  httpRow,
  loadRun,
  measureHttp,
  newDataDir,
  notes,
  openWindow,
  outcomes,
  outcomesReach,
  percentile,
  perRequest,
  record,
  ROOT,
  rows,
  runnersIdle,
  startService,
  sum,
  topologies,
  totalRss,
  WARM_UP_SECONDS,
  watchBacklog,
  webhook,
} from './measure.mjs';
import { canPin, childPids, startNode, stop } from './processes.mjs';
import { sequentialLatency } from './sequential.mjs';

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
export const STEPS_PER_CALL = 20;
const STEPS = `for (let i = 0; i < ${STEPS_PER_CALL}; i++) await Context.Step('step', () => i);\n${ACK}`;
/** Finished steps the replay row answers from the journal. */
export const REPLAYED_STEPS = 10_000;
/** Journals REPLAYED_STEPS steps, suspends in a sleep, then (resumed) replays them all and answers. */
const REPLAY = `let total = 0;
for (let i = 0; i < ${REPLAYED_STEPS}; i++) total += await Context.Step('step', () => i);
await Context.Sleep('pause', 1500);
${ACK}`;
/** An order of 800 lines, about 100 KB of JSON: what an ERP sends. */
export const LARGE_BODY = JSON.stringify({
  orderId: 42,
  customer: { id: 7, name: 'Ada' },
  lines: Array.from({ length: 800 }, (_, i) => ({ sku: `A-${i}`, qty: i % 7, price: i * 1.25, description: `item number ${i} of the order, with some words`, tags: ['x', 'y'] })),
});
/** The ack connector at the end of a 200 KB bundle (comments here: what its size costs, not what its code does). */
const BUNDLED = `${'// one line of a large bundle, such as a TypeScript project with its packages\n'.repeat(2600)}${ACK}`;
export const POLL_SAMPLES = 100;
/** Calls of the one-caller latency row, timed to the microsecond. */
const SEQUENTIAL_CALLS = 3000;
/** Operations of each broker-alone row. */
export const BROKER_OPERATIONS = 20_000;

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

export async function ceilingScenario() {
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

export async function embeddedScenario() {
  const api = await startNode([join(ROOT, 'tools/bench/mock-api.mjs')], { PATH: process.env.PATH });
  // The downstream API listens on loopback, which connectors may call only when trusted. The async
  // accept row queues faster than one process runs: its backlog passes the default in-flight quota
  // (10,000) within seconds, and the row would count 429s instead of accepts.
  const service = await startService('up', [], { DATA_DIR: newDataDir(), EMBEDDED_PROCESSES: '1', CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1', BOT_MAX_IN_FLIGHT: '1000000' });
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
export async function durableScenario() {
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
export async function durabilityScenario() {
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
export async function processesScenario() {
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
export async function writerScenario() {
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

/** Where the executors run: the first alone on core 1, the second beside it on core 0, when taskset can pin them. */
export function executorCores() {
  const pinned = CORES >= 2 && canPin('0') && canPin('1');
  return pinned ? { pinned, first: '1', second: '0' } : { pinned };
}

/**
 * Distributed: control and gateway; the accept rate with no executor running (gateway, broker and store
 * have the cores), which leaves a backlog; completions per second while it drains, with 1 executor and
 * then with a second one beside it; the rest of the backlog purged; sync calls with 1 and with 2.
 */
export async function distributedScenario(broker, pinning) {
  const prefix = `gi-bench-${randomBytes(4).toString('hex')}`;
  topologies.push(prefix);
  // A bot's jobs past its first 16 in flight wait in the pool's backlog lane (libs/bus-amqp amqp-topology.ts).
  const queues = [`${prefix}.jobs.default`, `${prefix}.jobs.default:backlog`];
  const env = {
    DATA_DIR: newDataDir(),
    AMQP_URL,
    BUS_PREFIX: prefix,
    TOKEN_SECRET: randomBytes(32).toString('hex'),
    EXECUTOR_CONCURRENCY: String(EXECUTOR_CONCURRENCY),
    SANDBOX_WORKERS: '1',
    // A backlog waits in the queue on purpose; the sweeper must not republish it meanwhile.
    REPUBLISH_AFTER_SECONDS: '3600',
    // The forwarding row's downstream API listens on loopback.
    CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1',
    // The backlog passes the default in-flight quota (10,000) within seconds: the accept row would count 429s,
    // and the drains would time a backlog of 10,000.
    BOT_MAX_IN_FLIGHT: '1000000',
  };
  const api = await startNode([join(ROOT, 'tools/bench/mock-api.mjs')], { PATH: process.env.PATH });
  const control = await startService('control', [], env);
  const gateway = await startService('gateway', [], env);
  const token = await setUp(control.url);
  await admin(control.url, 'PUT', '/bots/bench/integrations/forward', { entityName: 'Order', code: forwarding(api.url), allowedHosts: ['127.0.0.1'] });
  const front = [gateway, control];
  const asyncUrl = webhook(gateway.url, 'ack', true);
  const startExecutor = (cpus) => startService('executor', ['--pools', 'default'], env, { cpus });
  const label = (count) => {
    const cores = [pinning.first, pinning.second].slice(0, count).sort();
    return `${count} executor${count > 1 ? 's' : ''}${pinning.pinned ? ` (core${count > 1 ? 's' : ''} ${cores.join(', ')})` : ''}`;
  };

  const accept = await loadRun(asyncUrl, { connections: 50, token }, front, broker);
  httpRow('distributed-accept', 'distributed async accept (202/s), c=50, no executor running', 'c=50', accept, front);

  const queued = await watchQueue(AMQP_URL, queues);
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
    await measureHttp('distributed-sync-fetch-1', `distributed sync, ${label(1)}, connector forwarding with fetch to a downstream API on loopback, c=50`, webhook(gateway.url, 'forward'), {
      connections: 50,
      token,
      services: [...front, executors[0]],
      broker,
      against: 'fetch',
    });
    const again = await startExecutor(pinning.second);
    await measureHttp('distributed-sync-2', `distributed sync, ${label(2)}, c=50`, syncUrl, { connections: 50, token, services: [...front, executors[0], again], broker });
  } finally {
    await queued.close();
    await stop(api);
    if (rows.some((r) => r.id.startsWith('distributed-drain-'))) notes.push(drainNote());
  }
}

/**
 * The broker alone (tools/bench/broker-costs.mjs): its CPU per operation for each kind of message a call
 * sends, so the distributed rows' broker CPU reads as a sum of parts.
 */
export async function brokerScenario(brokerProcess) {
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

export async function sandboxOverhead() {
  execFileSync(join(ROOT, 'node_modules/.bin/esbuild'), ['libs/sandbox/bench/overhead.ts', '--bundle', '--platform=node', '--packages=external', '--outfile=dist/bench/overhead.js', '--log-level=warning'], { cwd: ROOT });
  const overhead = execFileSync(process.execPath, ['dist/bench/overhead.js', '3000'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  notes.push(`Sandbox overhead per run (the runtime's own micro-benchmark, libs/sandbox/bench/overhead.ts, 3,000 runs):\n\n\`\`\`\n${overhead.trim()}\n\`\`\``);
  console.log(overhead.trim());
}
