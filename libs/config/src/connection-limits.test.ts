import { ASSUMED_OPEN_FILES, defaultBotMaxWaits, defaultMaxConnections, openFileLimit } from './connection-limits';
import { parseServiceConfig } from './service-config';

/** /proc/self/limits as Linux writes it, with the given open-file limits. */
const procLimits = (soft: string, hard: string) =>
  [
    'Limit                     Soft Limit           Hard Limit           Units     ',
    'Max cpu time              unlimited            unlimited            seconds   ',
    `Max open files            ${soft.padEnd(21)}${hard.padEnd(21)}files     `,
    'Max locked memory         8388608              8388608              bytes     ',
  ].join('\n');

describe('connection limits', () => {
  it("reads the process's soft limit on open files, null when there is none to read", () => {
    expect(openFileLimit(() => procLimits('20000', '1048576'))).toBe(20_000);
    expect(openFileLimit(() => procLimits('unlimited', 'unlimited'))).toBe(Number.MAX_SAFE_INTEGER);
    expect(openFileLimit(() => 'Max processes 100 100 processes')).toBeNull();
    expect(
      openFileLimit(() => {
        throw new Error('ENOENT: no such file or directory');
      }),
    ).toBeNull();
    // On Linux, this process's own.
    if (process.platform === 'linux') expect(openFileLimit()).toBeGreaterThan(0);
  });

  it('holds half the open-file limit in connections, and a bot a quarter of them in waits', () => {
    expect(defaultMaxConnections(20_000)).toBe(10_000);
    expect(defaultMaxConnections(1024)).toBe(512);
    expect(defaultMaxConnections(null)).toBe(ASSUMED_OPEN_FILES / 2);
    // Never more than 500,000, never fewer than 16.
    expect(defaultMaxConnections(Number.MAX_SAFE_INTEGER)).toBe(500_000);
    expect(defaultMaxConnections(10)).toBe(16);
    expect(defaultBotMaxWaits(10_000)).toBe(2_500);
    expect(defaultBotMaxWaits(2)).toBe(1);
  });

  it('derives MAX_CONNECTIONS and BOT_MAX_WAITS from the open-file limit unless they are set', () => {
    const system = { openFileLimit: () => 20_000 };
    expect(parseServiceConfig({}, system)).toMatchObject({ MAX_CONNECTIONS: 10_000, BOT_MAX_WAITS: 2_500, FIRST_REQUEST_TIMEOUT_SECONDS: 5 });
    expect(parseServiceConfig({ MAX_CONNECTIONS: '400' }, system)).toMatchObject({ MAX_CONNECTIONS: 400, BOT_MAX_WAITS: 100 });
    expect(parseServiceConfig({ MAX_CONNECTIONS: '400', BOT_MAX_WAITS: '7' }, system)).toMatchObject({ MAX_CONNECTIONS: 400, BOT_MAX_WAITS: 7 });
    for (const env of [{ MAX_CONNECTIONS: '15' }, { BOT_MAX_WAITS: '0' }, { FIRST_REQUEST_TIMEOUT_SECONDS: '0' }]) expect(() => parseServiceConfig(env, system)).toThrow(Object.keys(env)[0]);
  });
});
