import { requiredSuites, skipDecision } from './suite-skip';

describe('conditional skips', () => {
  it('reads REQUIRE_SUITES as a comma list, spaces and empty items ignored', () => {
    expect([...requiredSuites({ REQUIRE_SUITES: 'promtool, caddy,,netns ' })]).toEqual(['promtool', 'caddy', 'netns']);
    expect(requiredSuites({}).size).toBe(0);
    // Chromium is accepted: the browser tests never skip, they fail without it.
    expect([...requiredSuites({ REQUIRE_SUITES: 'chromium' })]).toEqual(['chromium']);
  });

  it('refuses an unknown suite name, so a typo cannot let a skip through', () => {
    expect(() => requiredSuites({ REQUIRE_SUITES: 'promtool,cady' })).toThrow(/REQUIRE_SUITES: unknown suite cady \(known: promtool, caddy, /);
  });

  it('runs what is available, skips what is not, and fails what is not but required', () => {
    const required = requiredSuites({ REQUIRE_SUITES: 'caddy' });
    expect(skipDecision('caddy', undefined, required)).toBe('run');
    expect(skipDecision('promtool', undefined, required)).toBe('run');
    expect(skipDecision('promtool', 'promtool is not installed', required)).toBe('skip');
    expect(skipDecision('caddy', 'caddy is not installed', required)).toBe('fail');
  });
});
