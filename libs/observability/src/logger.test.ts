import { once } from 'node:events';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BATCH_MS, batchedOutput, createLogger } from './logger';

describe('log lines written in batches', () => {
  let dir: string;
  let file: string;
  let output: ReturnType<typeof batchedOutput>;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gi-log-'));
    file = join(dir, 'out.log');
    output = batchedOutput(openSync(file, 'a'));
  });
  afterEach(async () => {
    // The stream owns the descriptor: it stops its flush timer and closes it.
    const closed = once(output, 'close');
    output.destroy();
    await closed;
    rmSync(dir, { recursive: true, force: true });
  });
  const written = () => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line).msg as string);

  it('holds info lines for a moment, then writes them together', async () => {
    const logger = createLogger('info', 'test', { destination: output });
    logger.info('first');
    logger.info('second');
    expect(written()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, BATCH_MS * 4));
    expect(written()).toEqual(['first', 'second']);
  });

  it('writes a warning or an error at once, after the lines held before it', () => {
    const logger = createLogger('info', 'test', { destination: output });
    logger.info('request');
    logger.warn('careful');
    expect(written()).toEqual(['request', 'careful']);
    logger.info('again');
    logger.error({ err: new Error('boom') }, 'failed');
    expect(written()).toEqual(['request', 'careful', 'again', 'failed']);
  });

  it('writes what is held when the logger is flushed (a graceful stop)', () => {
    const logger = createLogger('info', 'test', { destination: output });
    logger.info('stopped');
    logger.flush();
    expect(written()).toEqual(['stopped']);
  });
});
