import { Cancellation } from './run-cancellation';

describe('Cancellation', () => {
  it('calls each listener once, in order, when requested, and reads as requested from then on', () => {
    const cancellation = new Cancellation();
    const calls: string[] = [];
    cancellation.onRequest(() => calls.push('first'));
    cancellation.onRequest(() => calls.push('second'));
    expect(cancellation.requested).toBe(false);
    cancellation.request();
    cancellation.request();
    expect(cancellation.requested).toBe(true);
    expect(calls).toEqual(['first', 'second']);
  });

  it('does not call a listener that was removed, nor one added after the request', () => {
    const cancellation = new Cancellation();
    const calls: string[] = [];
    const remove = cancellation.onRequest(() => calls.push('removed'));
    cancellation.onRequest(() => calls.push('kept'));
    remove();
    remove();
    cancellation.request();
    cancellation.onRequest(() => calls.push('late'))();
    expect(calls).toEqual(['kept']);
  });

  it('removes any listener, not only the first, and may be requested with none or removed from after the request', () => {
    const cancellation = new Cancellation();
    const calls: string[] = [];
    cancellation.onRequest(() => calls.push('first'));
    const removeSecond = cancellation.onRequest(() => calls.push('second'));
    cancellation.onRequest(() => calls.push('third'));
    removeSecond();
    cancellation.request();
    expect(calls).toEqual(['first', 'third']);
    expect(() => removeSecond()).not.toThrow();
    const alone = new Cancellation();
    expect(() => alone.request()).not.toThrow();
    expect(alone.requested).toBe(true);
  });
});
