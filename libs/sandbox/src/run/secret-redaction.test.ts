import type { ConnectorRunResult, LogLine } from '@gi/domain';
import { SecretRedaction } from './secret-redaction';

const SECRET = 'sk-live-0123456789';
const lines: LogLine[] = [{ at: 1, level: 'info', message: `token ${SECRET}` }];

describe('SecretRedaction', () => {
  it("redacts a secret's value from log lines, progress and a failure's message", () => {
    const redaction = new SecretRedaction({ apiKey: SECRET });
    const failed: ConnectorRunResult = { kind: 'failed', reason: 'threw', message: `bad ${SECRET}`, logs: lines, durationMs: 1 };
    expect(redaction.result(failed)).toMatchObject({ message: 'bad [secret]', logs: [{ message: 'token [secret]' }] });
    const seen: unknown[] = [];
    redaction.linesTo((batch) => seen.push(batch))?.(lines);
    redaction.progressTo((progress) => seen.push(progress))?.({ percent: 5, message: SECRET });
    expect(seen).toEqual([[{ at: 1, level: 'info', message: 'token [secret]' }], { percent: 5, message: '[secret]' }]);
  });

  it('passes on what a run without secrets hands back as it is, and its listeners themselves', () => {
    const redaction = new SecretRedaction({ short: 'abc' });
    const ok: ConnectorRunResult = { kind: 'ok', responseBody: { a: 1 }, logs: lines, durationMs: 1 };
    expect(redaction.result(ok)).toBe(ok);
    const listener = () => undefined;
    expect(redaction.linesTo(listener)).toBe(listener);
    expect(redaction.progressTo(listener)).toBe(listener);
    expect(new SecretRedaction(undefined).result(ok)).toBe(ok);
  });
});
