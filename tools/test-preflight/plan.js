'use strict';
/**
 * What the test preflight does, decided from what the probes found (tools/test-preflight.mjs probes
 * and acts; .ci/run calls it too, so these rules have one home). Pure: no I/O here, so each rule has a
 * small test (plan.test.js).
 *
 * Each decision is { action, line }: `line` is the one line printed for the check; `action` is
 * 'none' (ready), 'start' (start RabbitMQ, then wait), 'install' (apt-get install `packages`), or
 * 'refuse' (cannot be fixed here: `line` ends with the exact command to run).
 */

const DEFAULT_AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';
const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/**
 * The tools of the suites that skip where they are missing (libs/testing/src/suite-skip.ts names the
 * suites), with the Debian package of each.
 */
const SUITE_TOOLS = [
  { suite: 'promtool', command: 'promtool', debianPackage: 'prometheus' },
  { suite: 'caddy', command: 'caddy', debianPackage: 'caddy' },
  { suite: 'compose', command: 'docker-compose', debianPackage: 'docker-compose' },
];

const aptInstall = (packages) => `apt-get update -qq && apt-get install -y --no-install-recommends ${packages.join(' ')}`;

/**
 * Where AMQP_URL points: host and port (credentials left out, for printing), and whether starting
 * this machine's rabbitmq-server could make it answer (loopback, on the port it listens on by default).
 */
function amqpTarget(url = DEFAULT_AMQP_URL) {
  const parsed = new URL(url);
  const tls = parsed.protocol === 'amqps:';
  const host = parsed.hostname || '127.0.0.1';
  const port = Number(parsed.port) || (tls ? 5671 : 5672);
  return { host: host.replace(/^\[|\]$/g, ''), port, shown: `${parsed.hostname}:${port}`, startable: LOOPBACK.has(host) && port === 5672 };
}

/** facts: { target, answers, installed (rabbitmq-server on PATH) }. */
function decideRabbitmq({ target, answers, installed }) {
  if (answers) return { action: 'none', line: `RabbitMQ: answers on ${target.shown}` };
  if (!target.startable) {
    return { action: 'refuse', line: `RabbitMQ: nothing answers AMQP on ${target.shown}, where this machine's rabbitmq-server would not listen; start the broker AMQP_URL names, or unset AMQP_URL to use one here` };
  }
  if (!installed) {
    return { action: 'refuse', line: `RabbitMQ: nothing answers AMQP on ${target.shown} and rabbitmq-server is not installed; run as root: ${aptInstall(['rabbitmq-server'])} && rabbitmq-server -detached` };
  }
  return { action: 'start', line: `RabbitMQ: not answering on ${target.shown}; starting it (rabbitmq-server -detached)` };
}

/** What to print when a started broker did not answer in time. */
function rabbitmqDidNotStart(target, seconds) {
  return `RabbitMQ: started, but nothing answered AMQP on ${target.shown} within ${seconds} s; see /var/log/rabbitmq/, then run: rabbitmq-server -detached`;
}

/** facts: { path, present (an executable file), version (its --version, or ''), root, apt (apt-get on PATH) }. */
function decideChromium({ path, present, version, root, apt }) {
  if (present) return { action: 'none', line: `Chromium: ${version || 'present'} at ${path}` };
  if (path !== DEFAULT_CHROMIUM_PATH) {
    return { action: 'refuse', line: `Chromium: CHROMIUM_PATH=${path} is not an executable; point it at a Chromium, or unset it to use Debian's package at ${DEFAULT_CHROMIUM_PATH}` };
  }
  if (!root || !apt) {
    return { action: 'refuse', line: `Chromium: missing at ${path} (the browser tests need it) and it cannot be installed here (needs root and apt-get); run as root: ${aptInstall(['chromium'])} (or set CHROMIUM_PATH)` };
  }
  return { action: 'install', packages: ['chromium'], line: `Chromium: missing at ${path}; installing Debian's chromium package` };
}

/**
 * facts: { present: { command: boolean }, required (REQUIRE_SUITES as a set), root, apt, installAll }.
 * A missing tool is installed (root and apt) when REQUIRE_SUITES names its suite, or every missing one
 * with `installAll` (.ci/run); else it is only reported, and its suites print SKIPPED.
 */
function decideSuiteTools({ present, required, root, apt, installAll }) {
  const missing = SUITE_TOOLS.filter((tool) => !present[tool.command]);
  if (missing.length === 0) return { action: 'none', line: `Suite tools: ${SUITE_TOOLS.map((t) => t.command).join(', ')} present` };
  const needed = installAll ? missing : missing.filter((tool) => required.has(tool.suite));
  if (needed.length === 0) {
    const packages = missing.map((tool) => tool.debianPackage);
    return { action: 'none', line: `Suite tools: ${missing.map((t) => t.command).join(', ')} missing, so their suites print SKIPPED (to run them: ${aptInstall(packages)})` };
  }
  const packages = needed.map((tool) => tool.debianPackage);
  const names = needed.map((tool) => tool.command).join(', ');
  if (root && apt) return { action: 'install', packages, line: `Suite tools: ${names} missing; installing Debian's ${packages.join(', ')}` };
  const why = installAll ? 'they cannot be installed here (needs root and apt-get)' : `REQUIRE_SUITES names ${needed.map((t) => t.suite).join(', ')}`;
  return { action: 'refuse', line: `Suite tools: ${names} missing and ${why}; run as root: ${aptInstall(packages)}` };
}

module.exports = { DEFAULT_AMQP_URL, DEFAULT_CHROMIUM_PATH, SUITE_TOOLS, amqpTarget, decideRabbitmq, rabbitmqDidNotStart, decideChromium, decideSuiteTools };
