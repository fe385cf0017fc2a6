'use strict';
const { amqpTarget, decideChromium, decideRabbitmq, decideSuiteTools } = require('./plan');

const local = amqpTarget('amqp://guest:secret@127.0.0.1:5672');

describe('test preflight: RabbitMQ', () => {
  it('reads where AMQP_URL points without its credentials', () => {
    expect(local).toEqual({ host: '127.0.0.1', port: 5672, shown: '127.0.0.1:5672', startable: true });
    expect(amqpTarget('amqps://u:p@[::1]')).toMatchObject({ host: '::1', port: 5671, startable: false });
    expect(amqpTarget('amqp://localhost:5673')).toMatchObject({ port: 5673, startable: false });
    expect(amqpTarget('amqp://broker.example:5672').startable).toBe(false);
  });

  it('goes on when the broker answers, starts an installed local one that does not, and refuses otherwise with the command', () => {
    expect(decideRabbitmq({ target: local, answers: true, installed: false })).toEqual({ action: 'none', line: 'RabbitMQ: answers on 127.0.0.1:5672' });
    expect(decideRabbitmq({ target: local, answers: false, installed: true }).action).toBe('start');
    const missing = decideRabbitmq({ target: local, answers: false, installed: false });
    expect(missing.action).toBe('refuse');
    expect(missing.line).toContain('run as root: apt-get update -qq && apt-get install -y --no-install-recommends rabbitmq-server && rabbitmq-server -detached');
    // A broker elsewhere is not this machine's to start, installed or not.
    expect(decideRabbitmq({ target: amqpTarget('amqp://broker.example'), answers: false, installed: true }).action).toBe('refuse');
    expect(JSON.stringify(decideRabbitmq({ target: local, answers: false, installed: false }))).not.toContain('secret');
  });
});

describe('test preflight: Chromium', () => {
  const facts = { path: '/usr/bin/chromium', present: false, version: '', root: true, apt: true };

  it('goes on when present, installs Debian\'s package as root with apt, and refuses otherwise with the command', () => {
    expect(decideChromium({ ...facts, present: true, version: 'Chromium 1.2' })).toEqual({ action: 'none', line: 'Chromium: Chromium 1.2 at /usr/bin/chromium' });
    expect(decideChromium(facts)).toMatchObject({ action: 'install', packages: ['chromium'] });
    for (const lacking of [{ root: false }, { apt: false }]) {
      const refusal = decideChromium({ ...facts, ...lacking });
      expect(refusal.action).toBe('refuse');
      expect(refusal.line).toContain('run as root: apt-get update -qq && apt-get install -y --no-install-recommends chromium');
    }
  });

  it('never installs over a CHROMIUM_PATH the user chose', () => {
    const refusal = decideChromium({ ...facts, path: '/opt/chrome/chrome' });
    expect(refusal).toMatchObject({ action: 'refuse', line: expect.stringContaining('CHROMIUM_PATH=/opt/chrome/chrome is not an executable') });
  });
});

describe('test preflight: the tools of skippable suites', () => {
  const all = { promtool: true, caddy: true, 'docker-compose': true };
  const facts = { present: all, required: new Set(), root: true, apt: true, installAll: false };

  it('only reports a missing tool nobody requires: its suites print SKIPPED', () => {
    const report = decideSuiteTools({ ...facts, present: { ...all, caddy: false } });
    expect(report.action).toBe('none');
    expect(report.line).toContain('caddy missing, so their suites print SKIPPED');
  });

  it('installs the Debian package of a tool REQUIRE_SUITES needs, or every missing one for .ci/run', () => {
    const present = { promtool: false, caddy: false, 'docker-compose': true };
    expect(decideSuiteTools({ ...facts, present, required: new Set(['promtool']) })).toMatchObject({ action: 'install', packages: ['prometheus'] });
    expect(decideSuiteTools({ ...facts, present, installAll: true })).toMatchObject({ action: 'install', packages: ['prometheus', 'caddy'] });
  });

  it('refuses a required tool it cannot install, with the command', () => {
    const refusal = decideSuiteTools({ ...facts, present: { ...all, 'docker-compose': false }, required: new Set(['compose']), root: false });
    expect(refusal).toMatchObject({ action: 'refuse', line: expect.stringContaining('REQUIRE_SUITES names compose; run as root: apt-get update -qq && apt-get install -y --no-install-recommends docker-compose') });
  });
});
