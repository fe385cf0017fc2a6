import { SecretFilter } from '@gi/domain';
import type { LogLine } from '@gi/domain';
import { LogBuffer } from './log-buffer';

const NO_SECRETS = new SecretFilter(undefined);

/** A buffer on a clock the test moves, streaming into `batches`. */
function streamed(options: { intervalMs?: number; maxLines?: number } = {}) {
  let now = 1_000;
  const batches: LogLine[][] = [];
  const logs = new LogBuffer(10_000, 100, NO_SECRETS, () => now, { deliver: (lines) => batches.push(lines), intervalMs: options.intervalMs ?? 500, maxLines: options.maxLines ?? 3 });
  return { logs, batches, advance: (ms: number) => (now += ms) };
}

const messages = (lines: LogLine[]) => lines.map((line) => line.message);

describe('LogBuffer', () => {
  it('keeps every line for the result when the run does not stream', () => {
    const logs = new LogBuffer(10_000, 100, NO_SECRETS, () => 5);
    logs.add('info', 'a');
    logs.add('error', 'b');
    logs.addSystem('error', 'stopped');
    expect(logs.dueAt()).toBeNull();
    expect(logs.rest()).toEqual([
      { at: 5, level: 'info', message: 'a' },
      { at: 5, level: 'error', message: 'b' },
      { at: 5, level: 'error', message: 'stopped' },
    ]);
  });

  it('sends nothing of a run that ends before its first batch is due: the result has every line', () => {
    const { logs, batches, advance } = streamed();
    logs.add('info', 'a');
    advance(499);
    logs.add('info', 'b');
    logs.sendDue();
    expect(batches).toEqual([]);
    expect(messages(logs.rest())).toEqual(['a', 'b']);
  });

  it('sends a batch once its first line is old enough, when a line is added or the run wakes', () => {
    const { logs, batches, advance } = streamed();
    logs.add('info', 'a');
    expect(logs.dueAt()).toBe(1_500);
    advance(500);
    logs.add('info', 'b');
    expect(batches.map(messages)).toEqual([['a', 'b']]);
    expect(logs.dueAt()).toBeNull();
    logs.add('info', 'c');
    advance(200);
    logs.sendDue();
    expect(batches).toHaveLength(1);
    advance(300);
    logs.sendDue();
    expect(batches.map(messages)).toEqual([['a', 'b'], ['c']]);
    logs.addSystem('error', 'the end');
    expect(messages(logs.rest())).toEqual(['the end']);
  });

  it('sends a batch once it holds its count of lines, however young', () => {
    const { logs, batches } = streamed({ maxLines: 3 });
    for (const message of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) logs.add('info', message);
    expect(batches.map(messages)).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e', 'f'],
    ]);
    expect(messages(logs.rest())).toEqual(['g']);
  });

  it('keeps the byte and line budgets of the whole run, however the lines left', () => {
    let now = 0;
    const batches: LogLine[][] = [];
    const logs = new LogBuffer(10, 4, NO_SECRETS, () => now, { deliver: (lines) => batches.push(lines), intervalMs: 1, maxLines: 1 });
    expect(logs.add('info', 'abcd')).toBe('kept');
    now += 5;
    expect(logs.add('info', 'efgh')).toBe('kept');
    expect(logs.add('info', 'ijkl')).toBe('bytes');
    expect(logs.add('info', 'm')).toBe('bytes');
    expect([...batches.flat(), ...logs.rest()].map((line) => line.message)).toEqual(['abcd', 'efgh', 'ij']);
    const counted = new LogBuffer(1000, 2, NO_SECRETS, () => 0, { deliver: () => undefined, intervalMs: 1, maxLines: 1 });
    expect([counted.add('info', 'a'), counted.add('info', 'b'), counted.add('info', 'c')]).toEqual(['kept', 'kept', 'lines']);
  });

  it('survives a listener that throws: the batch is lost to it, the run goes on', () => {
    const logs = new LogBuffer(1000, 10, NO_SECRETS, () => 0, {
      deliver: () => {
        throw new Error('listener broke');
      },
      intervalMs: 500,
      maxLines: 1,
    });
    expect(logs.add('info', 'a')).toBe('kept');
    expect(logs.add('info', 'b')).toBe('kept');
    expect(logs.rest()).toEqual([]);
  });
});
