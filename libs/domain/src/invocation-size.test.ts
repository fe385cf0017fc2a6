import { GiError } from './errors';
import { assertEntityFits, LOG_LINE_OVERHEAD_BYTES, MAX_RECORDED_RESULT_BYTES, MAX_STORED_ENTITY_BYTES, recordedOutcomeJson } from './invocation-size';
import type { LogLine, Outcome } from './invocation';
import { UnrecordableOutcome } from './outcome';

const thrown = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('not refused');
};

describe('what an invocation keeps of the request', () => {
  it('fits the entity and the raw body together within the budget, counted in bytes', () => {
    expect(() => assertEntityFits('x'.repeat(MAX_STORED_ENTITY_BYTES), null)).not.toThrow();
    expect(() => assertEntityFits('x'.repeat(MAX_STORED_ENTITY_BYTES - 10), 'y'.repeat(10))).not.toThrow();
    const over = thrown(() => assertEntityFits('x'.repeat(MAX_STORED_ENTITY_BYTES - 10), 'é'.repeat(6))) as GiError;
    expect(over).toBeInstanceOf(GiError);
    expect([over.code, over.detail]).toEqual([
      'payload_too_large',
      'The request as stored (its query, headers and body as JSON, and the body as sent) takes 4194306 bytes; an invocation keeps at most 4194304. Send large data as files (GenericIntegrationFileTransfer).',
    ]);
    expect(thrown(() => assertEntityFits('é'.repeat(MAX_STORED_ENTITY_BYTES / 2 + 1), '')).message).toMatch(/takes 4194306 bytes/);
  });
});

describe('what an invocation keeps of the result', () => {
  const completed = (text: string): Outcome => ({ status: 'Completed', responseBody: text });
  const line = (message: string): LogLine => ({ at: 1, level: 'info', message });

  it('is the outcome as JSON, with each log line counted by its text in bytes and what goes with it', () => {
    expect(recordedOutcomeJson(completed('ok'), [line('hello')])).toBe('{"status":"Completed","responseBody":"ok"}');
    const frame = JSON.stringify(completed('')).length;
    const logs = [line('a'.repeat(100)), line('é'.repeat(50))];
    const room = MAX_RECORDED_RESULT_BYTES - frame - 200 - 2 * LOG_LINE_OVERHEAD_BYTES;
    expect(() => recordedOutcomeJson(completed('x'.repeat(room)), logs)).not.toThrow();
    const error = thrown(() => recordedOutcomeJson(completed('x'.repeat(room + 1)), logs));
    expect(error).toBeInstanceOf(UnrecordableOutcome);
    expect(error.message).toBe(`The outcome cannot be serialised: with its logs it takes ${MAX_RECORDED_RESULT_BYTES + 1} bytes; an invocation keeps at most ${MAX_RECORDED_RESULT_BYTES}`);
  });
});
