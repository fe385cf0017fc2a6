import type { ClaimedInvocation } from '@gi/domain';
import { createLogger } from '@gi/observability';
import { RunLog } from './run-log';

const invocation = { id: 'inv-1', botId: 'bot-a', integrationId: 'ack', pool: 'default', attempt: 2 } as ClaimedInvocation;

function logAt(level: string) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(level, 'executor', { destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  const child = jest.spyOn(logger, 'child');
  return { log: new RunLog(logger, invocation), lines, child };
}

describe('RunLog', () => {
  it("writes lines with the invocation's fields, making its child logger once", () => {
    const { log, lines, child } = logAt('info');
    log.warn({ status: 'Failed' }, 'invocation finished');
    log.info('run stopped');
    const fields = { invocationId: 'inv-1', botId: 'bot-a', integrationId: 'ack', pool: 'default', attempt: 2 };
    expect(lines).toEqual([
      expect.objectContaining({ ...fields, level: 40, status: 'Failed', msg: 'invocation finished' }),
      expect.objectContaining({ ...fields, level: 30, msg: 'run stopped' }),
    ]);
    expect(child).toHaveBeenCalledTimes(1);
  });

  it('makes no child logger for lines of levels that are off', () => {
    const { log, lines, child } = logAt('info');
    log.debug({ status: 'Completed' }, 'invocation finished');
    expect(lines).toEqual([]);
    expect(child).not.toHaveBeenCalled();
  });

  it('writes debug lines when debug is on', () => {
    const { log, lines } = logAt('debug');
    log.debug({ status: 'Completed' }, 'invocation finished');
    expect(lines).toEqual([expect.objectContaining({ level: 20, invocationId: 'inv-1', status: 'Completed', msg: 'invocation finished' })]);
  });
});
