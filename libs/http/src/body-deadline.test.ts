import type { GiError } from '@gi/domain';
import { BodyDeadline } from './body-deadline';

describe('BodyDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const start = () => {
    const expired: GiError[] = [];
    const deadline = new BodyDeadline({ idleMs: 1000, totalMs: 5000 }, (error) => expired.push(error));
    return { deadline, expired };
  };

  it('ends a body that pauses longer than the idle timeout with a 408', () => {
    const { deadline, expired } = start();
    jest.advanceTimersByTime(900);
    deadline.touch();
    jest.advanceTimersByTime(900);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(100);
    expect(expired.map((e) => [e.code, e.detail])).toEqual([['request_timeout', 'The request body stopped arriving: nothing came for 1 s; nothing was accepted.']]);
  });

  it('ends a body that keeps arriving but takes longer than the total timeout, once', () => {
    const { deadline, expired } = start();
    for (let t = 0; t < 6000; t += 500) {
      deadline.touch();
      jest.advanceTimersByTime(500);
    }
    expect(expired.map((e) => e.detail)).toEqual(['The request body took longer than 5 s to arrive; nothing was accepted.']);
  });

  it('does not count a pause of the service itself (hold) against the client', () => {
    const { deadline, expired } = start();
    deadline.hold();
    jest.advanceTimersByTime(3000);
    deadline.touch();
    jest.advanceTimersByTime(900);
    expect(expired).toEqual([]);
  });

  it('stays quiet once stopped', () => {
    const { deadline, expired } = start();
    deadline.stop();
    deadline.touch();
    jest.advanceTimersByTime(10_000);
    expect(expired).toEqual([]);
  });
});
