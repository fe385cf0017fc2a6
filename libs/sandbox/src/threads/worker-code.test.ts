import fc from 'fast-check';
import { CODES_PER_THREAD, CodeIds, SentCodes, ThreadCodes } from './worker-code';

describe('connector code sent to sandbox threads once', () => {
  it('numbers a code once per cache key, and anew when the key comes back with other code', () => {
    const ids = new CodeIds();
    const first = ids.idOf('acme/orders@1', 'A');
    expect(ids.idOf('acme/orders@1', 'A')).toBe(first);
    // Equal text in another string is the same code.
    expect(ids.idOf('acme/orders@1', ['A'].join(''))).toBe(first);
    const other = ids.idOf('acme/orders@1', 'B');
    expect(other).not.toBe(first);
    expect(ids.idOf('acme/orders@1', 'A')).not.toBe(first); // a number is never reused for other code
    expect(ids.idOf('acme/invoices@1', 'A')).not.toBe(first);
  });

  it("says whether a thread was sent a code, keeps the thread's most recent ones, and forgets one whose text was lost", () => {
    const sent = new SentCodes();
    expect(sent.sentBefore('k', 1)).toBe(false);
    expect(sent.sentBefore('k', 1)).toBe(true);
    expect(sent.sentBefore('k', 2)).toBe(false); // other code under the key: its text goes along
    expect(sent.sentBefore('k', 2)).toBe(true);
    sent.lost('k');
    expect(sent.sentBefore('k', 2)).toBe(false);
    for (let i = 0; i < CODES_PER_THREAD; i++) sent.sentBefore(`other${i}`, 1);
    expect(sent.sentBefore('k', 2)).toBe(false); // the least recently sent went first
  });

  it('gives a thread the code of the number asked for, or nothing', () => {
    const codes = new ThreadCodes();
    expect(codes.get('k', 1)).toBeUndefined();
    codes.learn('k', 1, 'A');
    expect(codes.get('k', 1)).toBe('A');
    expect(codes.get('k', 2)).toBeUndefined(); // never the text of another number
    codes.learn('k', 2, 'B');
    expect(codes.get('k', 1)).toBeUndefined();
    expect(codes.get('k', 2)).toBe('B');
  });

  it('never runs other code than the run names, whatever the thread forgot or the messages lost (property)', () => {
    // One pool, one thread; each step runs a code, or loses the text of the next message.
    const step = fc.oneof(fc.record({ key: fc.integer({ min: 0, max: 40 }), version: fc.integer({ min: 0, max: 2 }) }), fc.constant('lose' as const));
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), (steps) => {
        const ids = new CodeIds();
        const sent = new SentCodes();
        const thread = new ThreadCodes();
        let lose = false;
        for (const s of steps) {
          if (s === 'lose') {
            lose = true;
            continue;
          }
          const cacheKey = `k${s.key}`;
          const code = `code of ${cacheKey} v${s.version}`;
          const codeId = ids.idOf(cacheKey, code);
          const text = sent.sentBefore(cacheKey, codeId) ? undefined : code;
          if (lose && text !== undefined) {
            sent.lost(cacheKey); // the run fails; the thread never learns the text
            lose = false;
            continue;
          }
          if (text !== undefined) thread.learn(cacheKey, codeId, text);
          let ran = thread.get(cacheKey, codeId);
          if (ran === undefined) {
            // code-missing, answered with the run's own code
            sent.sentBefore(cacheKey, codeId);
            thread.learn(cacheKey, codeId, code);
            ran = thread.get(cacheKey, codeId);
          }
          if (ran !== code) return false;
        }
        return true;
      }),
    );
  });
});
