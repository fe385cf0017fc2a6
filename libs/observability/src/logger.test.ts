import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BATCH_MS, batchedOutput, createLogger } from './logger';

describe('log lines written in batches', () => {
  let dir: string;
  let file: string;
  let fd: number;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gi-log-'));
    file = join(dir, 'out.log');
    fd = openSync(file, 'a');
  });
  afterEach(() => {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });
  const written = () => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line).msg as string);

  it('holds info lines for a moment, then writes them together', async () => {
    const logger = createLogger('info', 'test', { destination: batchedOutput(fd) });
    logger.info('first');
    logger.info('second');
    expect(written()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, BATCH_MS * 4));
    expect(written()).toEqual(['first', 'second']);
  });

  it('writes a warning or an error at once, after the lines held before it', () => {
    const logger = createLogger('info', 'test', { destination: batchedOutput(fd) });
    logger.info('request');
    logger.warn('careful');
    expect(written()).toEqual(['request', 'careful']);
    logger.info('again');
    logger.error({ err: new Error('boom') }, 'failed');
    expect(written()).toEqual(['request', 'careful', 'again', 'failed']);
  });

  it('writes what is held when the logger is flushed (a graceful stop)', () => {
    const logger = createLogger('info', 'test', { destination: batchedOutput(fd) });
    logger.info('stopped');
    logger.flush();
    expect(written()).toEqual(['stopped']);
  });
});
