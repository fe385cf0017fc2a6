import { describeState, LineIndicator, SpinnerIndicator } from './progress-indicator';

function sink(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, sink: { write: (text: string) => writes.push(text), isTTY } };
}

describe('progress indicator', () => {
  it('describes the status, percent and message', () => {
    expect(describeState({ status: 'Running' })).toBe('Running');
    expect(describeState({ status: 'Running', percent: 42.4, message: 'rows\nimported' })).toBe('Running 42% rows imported');
  });

  it('writes a line per poll when stderr is not a terminal', () => {
    let now = 1_000;
    const { writes, sink: s } = sink(false);
    const indicator = new LineIndicator(s, 'inv1', () => now);
    now += 21_000;
    indicator.update({ status: 'Running', percent: 50, message: 'half way' });
    indicator.note('service unreachable, retry 1 of 5');
    indicator.stop();
    expect(writes).toEqual(['[21s] inv1 Running 50% half way\n', '[21s] service unreachable, retry 1 of 5\n']);
  });

  it('redraws a spinner line in place on a terminal and clears it when done', () => {
    let now = 0;
    const { writes, sink: s } = sink(true);
    const indicator = new SpinnerIndicator(s, 'inv1', () => now, 60_000);
    now = 3_000;
    indicator.update({ status: 'Running', percent: 10, message: 'starting' });
    indicator.render();
    indicator.stop();
    expect(writes[0]).toBe('\r\x1b[2K⠋ inv1 waiting for the result (0s)');
    expect(writes[1]).toBe('\r\x1b[2K⠙ inv1 Running 10% starting (3s)');
    expect(writes[2]).toBe('\r\x1b[2K⠹ inv1 Running 10% starting (3s)');
    expect(writes[3]).toBe('\r\x1b[2K');
    expect(writes.every((w) => !w.includes('\n'))).toBe(true);
  });
});
