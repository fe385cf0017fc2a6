import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InstanceRegistry } from '@gi/domain';
import { brokerAnswers, diskHasRoom, storeAnswers, storeTakesWrites } from './readiness-checks';

const clock = { now: () => Date.now() };

/** An instance registry whose writes succeed, fail or hang as the test says, counting them. */
function registry() {
  const state = { mode: 'ok' as 'ok' | 'refuse' | 'hang', writes: 0, roles: new Set<string>() };
  const instances: InstanceRegistry = {
    heartbeat: async (role) => {
      state.writes++;
      state.roles.add(role);
      if (state.mode === 'refuse') throw new Error('SQLITE_FULL: database or disk is full');
      if (state.mode === 'hang') await new Promise(() => undefined);
      return 1;
    },
    leave: async () => undefined,
  };
  return { state, store: { instances } };
}

describe('readiness checks', () => {
  afterEach(() => jest.useRealTimers());

  it('store and broker: ok while they answer, unreachable otherwise', async () => {
    expect(await storeAnswers({ ping: async () => true })()).toBe('ok');
    expect(await storeAnswers({ ping: async () => false })()).toBe('unreachable');
    expect(await brokerAnswers({ ping: async () => false })()).toBe('unreachable');
  });

  it('store writes: a probe write of its own role, refused or taken, at most one a second however often asked', async () => {
    jest.useFakeTimers();
    const { state, store } = registry();
    const check = storeTakesWrites(store, clock);
    expect(await check()).toBe('ok');
    expect(state.roles).toEqual(new Set(['readiness']));
    state.mode = 'refuse';
    // Within the second: the last verdict, no new write.
    for (let i = 0; i < 20; i++) expect(await check()).toBe('ok');
    expect(state.writes).toBe(1);
    jest.advanceTimersByTime(1000);
    expect(await check()).toBe('refusing writes');
    state.mode = 'ok';
    jest.advanceTimersByTime(1000);
    expect(await check()).toBe('ok');
    expect(state.writes).toBe(3);
  });

  it('store writes: a probe that does not answer within 2 s leaves the last verdict, and no second probe starts meanwhile', async () => {
    jest.useFakeTimers();
    const { state, store } = registry();
    const check = storeTakesWrites(store, clock);
    state.mode = 'refuse';
    expect(await check()).toBe('refusing writes');
    state.mode = 'hang';
    jest.advanceTimersByTime(1000);
    const asked = check();
    await jest.advanceTimersByTimeAsync(2000);
    expect(await asked).toBe('refusing writes');
    jest.advanceTimersByTime(5000);
    const again = check();
    await jest.advanceTimersByTimeAsync(2000);
    expect(await again).toBe('refusing writes');
    expect(state.writes).toBe(2);
  });

  it('disk: ok with the floor free on the file system of each directory (a missing one: its parent), low on space below it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gi-readiness-'));
    try {
      expect(await diskHasRoom([dir, join(dir, 'files', 'not-made-yet')], 1)()).toBe('ok');
      expect(await diskHasRoom([dir], Number.MAX_SAFE_INTEGER)()).toBe('low on space');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
