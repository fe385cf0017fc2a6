#!/usr/bin/env node
/**
 * The preflight of `npm test` (and of .ci/run's set-up steps): within seconds, before any tier runs,
 * RabbitMQ must answer AMQP at AMQP_URL and Chromium must be at CHROMIUM_PATH. What is missing is set
 * up where it can be (a local rabbitmq-server started, Debian's chromium installed as root with apt);
 * else the run stops at once with the exact command to run. One line per check.
 *
 *   node tools/test-preflight.mjs [rabbitmq] [chromium] [suite-tools] [--install-suite-tools]
 *
 * Without names every check runs. suite-tools reports promtool, caddy and docker-compose (their
 * suites print SKIPPED without them) and installs those REQUIRE_SUITES names; --install-suite-tools
 * installs every missing one (.ci/run). Node's built-in modules only: .ci/run calls it before `npm ci`.
 * The decisions are in test-preflight/plan.js.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import plan from './test-preflight/plan.js';

const RABBITMQ_WAIT_SECONDS = 120;
const CHECKS = ['rabbitmq', 'chromium', 'suite-tools'];

// --- probes ----------------------------------------------------------------------------------------

/** An AMQP 0-9-1 broker answers the protocol header with a method frame (frame type 1). */
function amqpAnswers({ host, port }, timeoutMs = 5000) {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (answers) => {
      socket.destroy();
      resolve(answers);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
    socket.once('connect', () => socket.write(Buffer.from('AMQP\x00\x00\x09\x01', 'latin1')));
    socket.once('data', (data) => done(data[0] === 1));
  });
}

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

const onPath = (command) => (process.env.PATH ?? '').split(delimiter).some((dir) => dir && isExecutable(join(dir, command)));
const versionOf = (path) => spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 15_000 }).stdout?.trim() ?? '';
const isRoot = () => process.getuid?.() === 0;

// --- actions ---------------------------------------------------------------------------------------

function run(command, args) {
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  return result.status === 0;
}

function aptInstall(packages) {
  return run('apt-get', ['update', '-qq']) && run('apt-get', ['install', '-y', '--no-install-recommends', ...packages]);
}

async function startRabbitmq(target) {
  if (!run('rabbitmq-server', ['-detached'])) return false;
  const started = Date.now();
  let reported = 0;
  while (!(await amqpAnswers(target))) {
    const waited = Math.floor((Date.now() - started) / 1000);
    if (waited >= RABBITMQ_WAIT_SECONDS) return false;
    if (waited >= reported + 10) {
      reported = waited;
      console.log(`RabbitMQ: waiting for it to answer on ${target.shown} (${waited} s of at most ${RABBITMQ_WAIT_SECONDS} s)`);
    }
    await sleep(2000);
  }
  // The port answers before every plugin is up; await_startup waits for those (bounded, best effort).
  spawnSync('rabbitmqctl', ['await_startup'], { stdio: 'ignore', timeout: 60_000 });
  return true;
}

// --- run -------------------------------------------------------------------------------------------

async function main(argv) {
  const installAll = argv.includes('--install-suite-tools');
  const names = argv.filter((arg) => !arg.startsWith('--'));
  const unknown = names.filter((name) => !CHECKS.includes(name));
  if (unknown.length > 0) {
    console.error(`test-preflight: unknown check ${unknown.join(', ')} (known: ${CHECKS.join(', ')})`);
    return 2;
  }
  const wanted = new Set(names.length > 0 ? names : CHECKS);
  const root = isRoot();
  const apt = onPath('apt-get');

  const target = plan.amqpTarget(process.env.AMQP_URL || plan.DEFAULT_AMQP_URL);
  const chromiumPath = process.env.CHROMIUM_PATH || plan.DEFAULT_CHROMIUM_PATH;
  const chromiumFacts = () => {
    const present = isExecutable(chromiumPath);
    return { path: chromiumPath, present, version: present ? versionOf(chromiumPath) : '', root, apt };
  };
  const toolFacts = () => ({
    present: Object.fromEntries(plan.SUITE_TOOLS.map((tool) => [tool.command, onPath(tool.command)])),
    required: new Set((process.env.REQUIRE_SUITES ?? '').split(',').map((name) => name.trim())),
    root,
    apt,
    installAll,
  });

  const decisions = [];
  if (wanted.has('rabbitmq')) decisions.push(['rabbitmq', plan.decideRabbitmq({ target, answers: await amqpAnswers(target), installed: onPath('rabbitmq-server') })]);
  if (wanted.has('chromium')) decisions.push(['chromium', plan.decideChromium(chromiumFacts())]);
  if (wanted.has('suite-tools')) decisions.push(['suite-tools', plan.decideSuiteTools(toolFacts())]);
  for (const [, decision] of decisions) console.log(decision.line);
  // Refuse before starting or installing anything: the whole run needs every check.
  if (decisions.some(([, decision]) => decision.action === 'refuse')) return 1;

  for (const [check, decision] of decisions) {
    if (decision.action === 'start' && !(await startRabbitmq(target))) {
      console.error(plan.rabbitmqDidNotStart(target, RABBITMQ_WAIT_SECONDS));
      return 1;
    }
    if (decision.action === 'install' && !aptInstall(decision.packages)) {
      console.error(`${check}: apt-get install ${decision.packages.join(' ')} failed (see above)`);
      return 1;
    }
    if (decision.action === 'none') continue;
    // Probed again: the line says what is there now, and a set-up that did not take is refused.
    const after =
      check === 'rabbitmq'
        ? plan.decideRabbitmq({ target, answers: await amqpAnswers(target), installed: true })
        : check === 'chromium'
          ? plan.decideChromium({ ...chromiumFacts(), root: false })
          : plan.decideSuiteTools({ ...toolFacts(), root: false });
    console.log(after.line);
    if (after.action !== 'none') return 1;
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
